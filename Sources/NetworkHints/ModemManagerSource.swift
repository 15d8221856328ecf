import Reachability

/// The life of the ModemManager hint source, as a value type, by the same rules as
/// ``NetworkManagerSource``: every decision about waiting, timing out, keeping a stale answer
/// and dropping it is taken here, with the time passed in (monotonic microseconds for
/// deadlines, wall-clock seconds for what people read); the hints thread only performs the
/// reads and publishes what this returns.
///
/// Unknown is not permission: until ModemManager answered, timed out or is known absent the
/// source is ``HintSourceState/waiting(since:)``. When it leaves the bus after having answered
/// (a restart), its last answer is kept as ``HintSourceState/stale(since:)`` until it returns
/// or the stale limit passes, then dropped (``HintSourceState/expired(since:)``). Back but
/// without an answer yet for a link it had one for (it probes its modems again after a
/// restart), that link's stale answer stays until it answers for it or the limit passes.
struct ModemManagerSource: Sendable, Equatable {
  /// What to put into the monitor's hints.
  struct Publication: Sendable, Equatable {
    var snapshot: ModemManagerSnapshot
    var state: HintSourceState
  }

  /// `[network] source-timeout` and `[network] stale-hints`.
  let limits: NetworkManagerSource.Limits
  private(set) var state: HintSourceState
  /// The answer in the monitor (fresh or stale).
  private(set) var published: ModemManagerSnapshot = .absent
  /// When a stale answer is dropped (monotonic microseconds).
  private(set) var staleUntil: UInt64?
  /// ModemManager's own answer since it came back, while stale answers for some links are
  /// still merged in.
  private var freshWhileStale: ModemManagerSnapshot?

  /// A source that should answer, waiting since `wall`.
  init(limits: NetworkManagerSource.Limits, wall: Double) {
    self.limits = limits
    state = .waiting(since: wall)
  }

  /// The deadline of a read starting at `now`.
  func readDeadline(now: UInt64) -> UInt64 {
    now &+ NetworkManagerSource.microseconds(limits.sourceTimeout)
  }

  /// ModemManager answered with `snapshot`.
  mutating func answered(_ snapshot: ModemManagerSnapshot) -> Publication? {
    if state.isStale {
      let pending = published.roaming.filter { snapshot.roaming[$0.key] == nil }
      if !pending.isEmpty {
        freshWhileStale = snapshot
        var merged = snapshot
        merged.roaming.merge(pending) { fresh, _ in fresh }
        return change(to: state, snapshot: merged)
      }
    }
    staleUntil = nil
    freshWhileStale = nil
    return change(to: .answered, snapshot: snapshot)
  }

  /// ModemManager is not on the bus (it never was, or it left), or our bus connection broke.
  mutating func notOnBus(now: UInt64, wall: Double) -> Publication? {
    if hasAnswer { return keepStale(now: now, wall: wall) }
    return change(to: .absent, snapshot: .absent)
  }

  /// ModemManager is on the bus but did not answer within the source timeout.
  mutating func silent(now: UInt64, wall: Double) -> Publication? {
    if hasAnswer { return keepStale(now: now, wall: wall) }
    if case .timedOut = state { return nil }
    return change(to: .timedOut(since: wall), snapshot: .absent)
  }

  /// Drops a stale answer whose limit passed at `now`.
  mutating func tick(now: UInt64, wall: Double) -> Publication? {
    guard let staleUntil, now >= staleUntil else { return nil }
    self.staleUntil = nil
    if let fresh = freshWhileStale {
      freshWhileStale = nil
      return change(to: .answered, snapshot: fresh)
    }
    return change(to: .expired(since: wall), snapshot: .absent)
  }

  /// Whether the monitor holds an answer of ModemManager's (fresh or stale).
  private var hasAnswer: Bool { state == .answered || state.isStale }

  private mutating func keepStale(now: UInt64, wall: Double) -> Publication? {
    if state.isStale { return nil }
    staleUntil = now &+ NetworkManagerSource.microseconds(limits.staleLimit)
    return change(to: .stale(since: wall), snapshot: published)
  }

  private mutating func change(to state: HintSourceState, snapshot: ModemManagerSnapshot)
    -> Publication?
  {
    guard state != self.state || snapshot != published else { return nil }
    self.state = state
    published = snapshot
    return Publication(snapshot: snapshot, state: state)
  }
}
