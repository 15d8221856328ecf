import Foundation

/// When calendar-scheduled work is due, as a pure function of the last elapse it ran for and
/// the current wall-clock time: the decisions the dispatcher takes for a calendar job (catch-up,
/// splay, windows), free of clocks and I/O so that a wall-clock step is just a new `now`.
public struct CalendarSchedule: Hashable, Sendable {
  /// The events; the work is due at every elapse of any of them.
  public var events: [CalendarEvent]
  /// The zone of events without one of their own (the machine's local zone).
  public var localZone: CalendarTimeZone
  /// Windows a run must start in (none: any time), read in ``localZone``.
  public var windows: [TimeWindow]
  /// The largest splay added to an elapse (`random-delay`).
  public var randomDelay: Duration
  /// How the splay is chosen.
  public var splay: Splay
  /// Whether an elapse missed while not running (daemon stopped, machine off or suspended)
  /// gives one run at once (`catch-up = true`, systemd's `Persistent=true`).
  public var catchUp: Bool

  /// How the delay after each elapse is chosen, in [0, ``randomDelay``].
  public enum Splay: Hashable, Sendable {
    /// The same for every elapse, fixed by the machine id and job id (`fixed-random-delay`).
    case fixed(machineId: String, jobId: String)
    /// Different for every elapse, drawn from `seed` (a new seed each start, as systemd
    /// draws anew each time a timer is armed); the same elapse gets the same delay within a
    /// run of the daemon, so a re-plan does not move it.
    case perElapse(seed: UInt64, jobId: String)
  }

  /// The next run: the elapse it stands for and when it may start.
  public struct Due: Hashable, Sendable {
    /// The calendar elapse this run is for (recorded as the last elapse once it runs).
    public var elapse: WallInstant
    /// Its start: the elapse plus the splay, or now for a caught-up elapse, moved to the next
    /// window opening when outside every window.
    public var startAt: WallInstant
    /// When a window held the start back, where it would have been.
    public var heldFrom: WallInstant?
    /// Whether this run catches up an elapse missed while not running.
    public var isCatchUp: Bool
  }

  /// Creates a schedule.
  public init(
    events: [CalendarEvent], localZone: CalendarTimeZone = CalendarTimeZones.local(),
    windows: [TimeWindow] = [], randomDelay: Duration = .zero,
    splay: Splay = .perElapse(seed: 0, jobId: ""), catchUp: Bool = true
  ) {
    self.events = events
    self.localZone = localZone
    self.windows = windows
    self.randomDelay = randomDelay
    self.splay = splay
    self.catchUp = catchUp
  }

  /// The first elapse of any event strictly after `instant`, or nil.
  public func nextElapse(after instant: WallInstant) -> WallInstant? {
    events.compactMap { $0.nextElapse(after: instant, localZone: localZone) }.min()
  }

  /// What runs next, given the elapse the work last ran for (nil: never, e.g. just scheduled,
  /// when only future elapses count) and `now`; nil when no elapse is left.
  public func due(lastElapse: WallInstant?, now: WallInstant) -> Due? {
    // However many elapses were missed, one run stands for the latest of them.
    if catchUp, let latest = latestElapse(after: lastElapse, atOrBefore: now) {
      return held(Due(elapse: latest, startAt: now, heldFrom: nil, isCatchUp: true))
    }
    guard let elapse = nextElapse(after: max(lastElapse ?? now, now)) else { return nil }
    let start = elapse.advanced(by: delay(for: elapse))
    return held(Due(elapse: elapse, startAt: start, heldFrom: nil, isCatchUp: false))
  }

  /// The latest elapse after `last` and not after `now` (nil without `last`: only elapses
  /// after scheduling count; nil when none), in O(log(now − last)) searches however many
  /// elapses lie between (see ``latestElapse(after:atOrBefore:next:)``).
  public func latestElapse(after last: WallInstant?, atOrBefore now: WallInstant) -> WallInstant? {
    guard let last else { return nil }
    return Self.latestElapse(after: last, atOrBefore: now, next: nextElapse(after:))
  }

  /// The latest value of `next` in (`last`, `now`], where `next(t)` is the first elapse
  /// strictly after `t`, read to the microsecond (as ``CalendarEvent/nextElapse(after:localZone:)``
  /// reads it). Found by bisection over the microseconds between, never by walking the missed
  /// elapses: a per-second job a year behind costs about 45 searches instead of 31 million, 50
  /// years about 51. `b` has an elapse in (b, now] exactly when `next(b) <= now`, which holds
  /// up to a point and not after it: the answer is `next` of the last microsecond where it holds.
  static func latestElapse(
    after last: WallInstant, atOrBefore now: WallInstant, next: (WallInstant) -> WallInstant?
  ) -> WallInstant? {
    guard let first = next(last), first <= now else { return nil }
    // The common case: one elapse missed (or the second within reach) costs two searches.
    guard let second = next(first), second <= now else { return first }
    func instant(_ microseconds: Int64) -> WallInstant {
      WallInstant(nanosecondsSince1970: microseconds * 1000)
    }
    // `low` has an elapse in (low, now] (`lowElapse`), `high` has none.
    var low = first.nanosecondsSince1970.floorDivided(by: 1000)
    var lowElapse = second
    var high = now.nanosecondsSince1970.floorDivided(by: 1000)
    while high - low > 1 {
      let middle = low + (high - low) / 2
      if let elapse = next(instant(middle)), elapse <= now {
        low = middle
        lowElapse = elapse
      } else {
        high = middle
      }
    }
    return lowElapse
  }

  /// Whether a run may start at `instant` (inside a window, or there are none).
  public func allowsStart(at instant: WallInstant) -> Bool {
    windows.isEmpty || windows.contains { $0.contains(instant, in: localZone) }
  }

  /// The first instant at or after `instant` a run may start.
  public func nextStart(atOrAfter instant: WallInstant) -> WallInstant {
    windows.map { $0.nextOpening(atOrAfter: instant, in: localZone) }.min() ?? instant
  }

  /// When the window a run started in at `start` closes (`window-end = "stop"`), or nil
  /// without windows.
  public func windowCloses(after start: WallInstant) -> WallInstant? {
    windows.compactMap { $0.closing(after: start, in: localZone) }.max()
  }

  /// The splay after `elapse`.
  public func delay(for elapse: WallInstant) -> Duration {
    guard randomDelay > .zero else { return .zero }
    switch splay {
    case .fixed(let machineId, let jobId):
      return RandomDelay.fixed(machineId: machineId, jobId: jobId, maximum: randomDelay)
    case .perElapse(let seed, let jobId):
      return RandomDelay.fixed(
        machineId: String(seed, radix: 16), jobId: "\(jobId)@\(elapse.nanosecondsSince1970)",
        maximum: randomDelay)
    }
  }

  private func held(_ due: Due) -> Due {
    let start = nextStart(atOrAfter: due.startAt)
    guard start != due.startAt else { return due }
    var held = due
    held.heldFrom = due.startAt
    held.startAt = start
    return held
  }
}
