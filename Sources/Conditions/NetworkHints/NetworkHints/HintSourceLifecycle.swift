import CSystemdBus
import Reachability

/// What a D-Bus hint source answers, as far as ``HintSourceLifecycle`` needs to know: its
/// per-link hints (merged with the stale ones while the source is back but has not answered for
/// every link yet) and the answer of an absent source.
protocol HintSourceAnswer: Sendable, Equatable {
  /// What the source says about one link.
  associatedtype LinkHint: Sendable, Equatable
  /// The answer of a source that is not there: no opinion on anything.
  static var absent: Self { get }
  /// The hints per network interface name, merged while stale.
  var linkHints: [String: LinkHint] { get set }
  /// Whether the source is back but still starting up: a stale answer stays until it is done.
  var isStartingUp: Bool { get }
}

/// The limits of a hint source, from `[network] source-timeout` and `[network] stale-hints`.
struct HintSourceLimits: Sendable, Equatable {
  /// How long one read may take in all (every device together).
  var sourceTimeout: Duration
  /// How long a stale answer is kept after the source left.
  var staleLimit: Duration
}

/// The life of a D-Bus hint source (NetworkManager, ModemManager), as a value type: every
/// decision about waiting, timing out, keeping a stale answer and dropping it is taken here,
/// with the time passed in (monotonic microseconds for deadlines, wall-clock seconds for what
/// people read); the hints thread only performs the reads and publishes what this returns.
///
/// Unknown is not permission: until the source answered, timed out or is known absent it is
/// ``HintSourceState/waiting(since:)``; when it leaves the bus (or stops answering) after
/// having answered, its last answer is kept as ``HintSourceState/stale(since:)`` until it
/// returns or the stale limit passes, then dropped (``HintSourceState/expired(since:)``: the
/// kernel decides). Back but without an answer yet for a link it had one for (its device not
/// back, `Metered` still unknown until the DHCP lease is read again, a modem probed again after
/// a restart), that link's stale answer stays, merged into the fresh one, until the source
/// answers for it or the limit passes.
struct HintSourceLifecycle<Snapshot: HintSourceAnswer>: Sendable, Equatable {
  typealias Limits = HintSourceLimits

  /// What to put into the monitor's hints.
  struct Publication: Sendable, Equatable {
    var snapshot: Snapshot
    var state: HintSourceState
  }

  let limits: Limits
  private(set) var state: HintSourceState
  /// The answer in the monitor (fresh or stale).
  private(set) var published: Snapshot = .absent
  /// When a stale answer is dropped (monotonic microseconds).
  private(set) var staleUntil: UInt64?
  /// The source's own answer since it came back, while stale answers for some links are still
  /// merged in (what is left when the limit passes).
  private var freshWhileStale: Snapshot?

  /// A source that should answer, waiting since `wall`.
  init(limits: Limits, wall: Double) {
    self.limits = limits
    state = .waiting(since: wall)
  }

  /// How long one read may take, in microseconds.
  var readTimeout: UInt64 { Self.microseconds(limits.sourceTimeout) }

  /// The source answered with `snapshot`. Back after leaving but still starting up: the stale
  /// answer stays until it is done or the limit passes. Back but without an answer yet for a
  /// link it had one for: that link's stale answer stays, merged into the fresh one. Starting
  /// up while its last answer is held (it left and came back between two reads, so it was
  /// never seen away): that answer turns stale and stays, as when it was seen away; `now` and
  /// `wall` start the stale limit then.
  mutating func answered(
    _ snapshot: Snapshot, now: UInt64 = csd_monotonic_microseconds(), wall: Double = wallSeconds()
  ) -> Publication? {
    if snapshot.isStartingUp, state == .answered { return keepStale(now: now, wall: wall) }
    if state.isStale {
      if snapshot.isStartingUp { return nil }
      let pending = published.linkHints.filter { snapshot.linkHints[$0.key] == nil }
      if !pending.isEmpty {
        freshWhileStale = snapshot
        var merged = snapshot
        merged.linkHints.merge(pending) { fresh, _ in fresh }
        return change(to: state, snapshot: merged)
      }
    }
    staleUntil = nil
    freshWhileStale = nil
    return change(to: .answered, snapshot: snapshot)
  }

  /// The source is not on the bus (it never was, or it left), or our bus connection broke.
  mutating func notOnBus(now: UInt64, wall: Double) -> Publication? {
    if hasAnswer { return keepStale(now: now, wall: wall) }
    return change(to: .absent, snapshot: .absent)
  }

  /// The source is on the bus but did not answer within the source timeout.
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

  /// Whether the monitor holds an answer of the source's (fresh or stale).
  private var hasAnswer: Bool { state == .answered || state.isStale }

  private mutating func keepStale(now: UInt64, wall: Double) -> Publication? {
    if state.isStale { return nil }
    staleUntil = now &+ Self.microseconds(limits.staleLimit)
    return change(to: .stale(since: wall), snapshot: published)
  }

  private mutating func change(to state: HintSourceState, snapshot: Snapshot) -> Publication? {
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
