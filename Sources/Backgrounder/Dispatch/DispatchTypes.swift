import Foundation

/// Identifies one run (one claim of a task) for its whole life.
struct RunToken: Hashable, Sendable {
  var value: UInt64
}

/// The network gate a run must pass before its worker is invoked.
struct GateSpec: Hashable, Sendable {
  var requirement: NetworkNeed
  var deadline: WallInstant
}

/// A claimed run that the driver must carry out.
struct RunTicket: Sendable {
  var token: RunToken
  var taskId: TaskId
  var attempt: Int
  var input: Data
  var budget: Duration
  var inhibitPolicy: InhibitPolicy
  /// `nil` when the worker may be invoked at once.
  var gate: GateSpec?
  /// Claimed ahead of a free worker: the state machine keeps it until it promotes it
  /// (``Effects/promotions``); the driver only tells it where the claim was enqueued.
  var claimedAhead = false
  /// The claim's store position: the worker is invoked only once it is committed.
  var claimSequence: StoreWriter.Sequence = 0
  /// The task's constraints had relaxed when it was claimed (``ConstraintRelaxation``).
  var relaxed = false
  /// The task's bandwidth cap (``WorkConstraints/bandwidth``).
  var bandwidth: BandwidthCap?
}

/// How a run ended, as the driver observed it (the first of these wins).
enum RunEnding: Hashable, Sendable {
  case finished(WorkResult)
  case expired
  /// Expired by `Backgrounder.expire` (the `backgrounder expire` verb), not by the budget.
  case expiredOnRequest
  case stopped(StopReason)
  /// The network changed between the decision and the worker's irreversible start
  /// (``WorkContext/confirmStart()`` said no): not started, no attempt used, waits again.
  case conditionsChanged
  /// The worker declined to start for a condition of its own (``WorkContext/declineStart(reason:)``):
  /// not started, no attempt used, tried again after the task's backoff (a deferral).
  case declined(String)
  case factoryThrew(String)
  case factoryDeclined
  /// The claim could not be made durable; the worker was not invoked.
  case notStarted(String)
}

/// What the gate decided for a run.
enum GateDecision: Sendable {
  /// Invoke the worker; wait for `sequence` to be committed first.
  case invoke(startedAt: WallInstant, attempt: Int)
  /// The run is over without invoking the worker (deferred, blocked, or stale).
  case over
}

/// The side effects a state-machine step asks the driver to perform, in order.
struct Effects: Sendable {
  var ops: [StoreOp] = []
  var events: [MonitorEvent] = []
  var tickets: [RunTicket] = []
  var gateReleases: [RunToken] = []
  var stops: [(RunToken, StopReason)] = []
  /// Claims made ahead whose worker is to be invoked now (in a free slot), with the tickets
  /// they were claimed with.
  var promotions: [RunTicket] = []
  /// Runs to freeze, for the condition they lost (`on-condition-lost = "pause"`).
  var pauses: [(RunToken, StopReason)] = []
  /// Paused runs to thaw.
  var resumes: [RunToken] = []

  var isEmpty: Bool {
    ops.isEmpty && events.isEmpty && tickets.isEmpty && gateReleases.isEmpty && stops.isEmpty
      && promotions.isEmpty && pauses.isEmpty && resumes.isEmpty
  }

  /// Adds `other`'s effects after these (several decisions taken in one step).
  mutating func append(_ other: Effects) {
    ops += other.ops
    events += other.events
    tickets += other.tickets
    gateReleases += other.gateReleases
    stops += other.stops
    promotions += other.promotions
    pauses += other.pauses
    resumes += other.resumes
  }

  /// Persists `row` and appends one entry to its run history.
  mutating func persist(
    _ row: TaskRow, run attempt: Int, startedAt: WallInstant?, endedAt: WallInstant,
    outcome: String, reason: String?
  ) {
    ops.append(.upsert(row))
    ops.append(
      .appendRun(
        RunRow(
          taskId: row.id, attempt: attempt, startedAt: startedAt, endedAt: endedAt,
          outcome: outcome, reason: reason)))
  }
}

/// A cap on expedited runs: at most `runs` expedited starts per `window`.
public struct ExpeditedQuota: Hashable, Sendable {
  /// Expedited starts allowed per window.
  public var runs: Int
  /// The sliding window.
  public var window: Duration

  /// Creates a quota.
  public init(runs: Int, window: Duration) {
    self.runs = runs
    self.window = window
  }
}

/// The dispatcher's fixed settings.
struct DispatchSettings: Sendable {
  var concurrencyLimit: Int
  var minimumPeriodicInterval: Duration
  var expeditedQuota: ExpeditedQuota?
  /// The longest network-gate wait (5 s); the gate waits min(this, budget / 4).
  var gateLimit: Duration = .seconds(5)
  /// Delay before retrying a claim that could not be persisted.
  var storeRetryDelay: Duration = .seconds(10)
  /// One-time tasks claimed at most ahead of free workers (0: claims only into free slots).
  var claimAhead = 0
  /// The zone time windows and calendars without a zone of their own are read in.
  var timeZone: CalendarTimeZone = .utc

  /// The runtime's claim-ahead depth: enough claims per commit that the fsync is shared by
  /// many jobs, few enough that a crash leaves little to resume.
  static func claimAhead(concurrencyLimit: Int) -> Int {
    max(64, concurrencyLimit)
  }
}

/// A queue entry: a task that becomes eligible at `time`; stale when `version` is old.
struct DueKey: Comparable, Sendable {
  var time: WallInstant
  var id: TaskId
  var version: UInt64

  static func < (lhs: DueKey, rhs: DueKey) -> Bool {
    if lhs.time != rhs.time { return lhs.time < rhs.time }
    return lhs.id < rhs.id
  }

  static func == (lhs: DueKey, rhs: DueKey) -> Bool {
    lhs.time == rhs.time && lhs.id == rhs.id && lhs.version == rhs.version
  }
}

/// A deterministic random source for jitter (SplitMix64), kept inside the state machine so
/// that decisions stay pure and reproducible.
struct SplitMix64: Sendable {
  var state: UInt64

  mutating func nextUnit() -> Double {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return Double(z >> 11) / Double(1 << 53)
  }
}
