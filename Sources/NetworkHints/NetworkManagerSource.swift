import Reachability

/// The life of the NetworkManager hint source, as a value type: every decision about waiting,
/// timing out, keeping a stale answer and dropping it is taken here, with the time passed in
/// (monotonic microseconds for deadlines, wall-clock seconds for what people read); the hints
/// thread only performs the reads and publishes what this returns.
///
/// Unknown is not permission: until NetworkManager answered, timed out or is known absent the
/// source is ``HintSourceState/waiting(since:)``; when it leaves the bus (or stops answering)
/// after having answered, its last answer is kept as ``HintSourceState/stale(since:)`` until it
/// returns or the stale limit passes, then dropped (``HintSourceState/expired(since:)``: the
/// kernel decides).
struct NetworkManagerSource: Sendable, Equatable {
  /// The limits, from `[network] source-timeout` and `[network] stale-hints`.
  struct Limits: Sendable, Equatable {
    /// How long one read may take in all (every device together).
    var sourceTimeout: Duration
    /// How long a stale answer is kept after NetworkManager left.
    var staleLimit: Duration
  }

  /// What to put into the monitor's hints.
  struct Publication: Sendable, Equatable {
    var snapshot: NetworkManagerSnapshot
    var state: HintSourceState
  }

  let limits: Limits
  private(set) var state: HintSourceState
  /// The answer in the monitor (fresh or stale).
  private(set) var published: NetworkManagerSnapshot = .absent
  /// When a stale answer is dropped (monotonic microseconds).
  private(set) var staleUntil: UInt64?
  /// NetworkManager's own answer since it came back, while stale answers for some links are
  /// still merged in (what is left when the limit passes).
  private var freshWhileStale: NetworkManagerSnapshot?

  /// A source that should answer, waiting since `wall`.
  init(limits: Limits, wall: Double) {
    self.limits = limits
    state = .waiting(since: wall)
  }

  /// The deadline of a read starting at `now`.
  func readDeadline(now: UInt64) -> UInt64 {
    now &+ Self.microseconds(limits.sourceTimeout)
  }

  /// NetworkManager answered with `snapshot`. Back after leaving but still starting up: the
  /// stale answer stays until it is done or the limit passes. Back but without a metered
  /// answer yet for a link it had one for (its device not back, or `Metered` still unknown
  /// until the DHCP lease is read again): that link's stale answer stays, merged into the
  /// fresh one, until NetworkManager answers for it or the limit passes.
  mutating func answered(_ snapshot: NetworkManagerSnapshot) -> Publication? {
    if state.isStale {
      if snapshot.isStartingUp { return nil }
      let pending = published.metered.filter { snapshot.metered[$0.key] == nil }
      if !pending.isEmpty {
        freshWhileStale = snapshot
        var merged = snapshot
        merged.metered.merge(pending) { fresh, _ in fresh }
        return change(to: state, snapshot: merged)
      }
    }
    staleUntil = nil
    freshWhileStale = nil
    return change(to: .answered, snapshot: snapshot)
  }

  /// NetworkManager is not on the bus (it never was, or it left), or our bus connection broke.
  mutating func notOnBus(now: UInt64, wall: Double) -> Publication? {
    if hasAnswer { return keepStale(now: now, wall: wall) }
    return change(to: .absent, snapshot: .absent)
  }

  /// NetworkManager is on the bus but did not answer within the source timeout.
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
      // Back, but silent about some links for too long: its own answer alone decides.
      freshWhileStale = nil
      return change(to: .answered, snapshot: fresh)
    }
    return change(to: .expired(since: wall), snapshot: .absent)
  }

  /// Whether the monitor holds an answer of NetworkManager's (fresh or stale).
  private var hasAnswer: Bool { state == .answered || state.isStale }

  private mutating func keepStale(now: UInt64, wall: Double) -> Publication? {
    if state.isStale { return nil }
    staleUntil = now &+ Self.microseconds(limits.staleLimit)
    return change(to: .stale(since: wall), snapshot: published)
  }

  private mutating func change(to state: HintSourceState, snapshot: NetworkManagerSnapshot)
    -> Publication?
  {
    guard state != self.state || snapshot != published else { return nil }
    self.state = state
    published = snapshot
    return Publication(snapshot: snapshot, state: state)
  }

  static func microseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0 else { return 0 }
    return UInt64(seconds) &* 1_000_000 &+ UInt64(attoseconds / 1_000_000_000_000)
  }
}
