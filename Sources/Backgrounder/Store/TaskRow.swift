import Foundation
import GRDB

/// One task as the store keeps it: the request and its scheduling state.
struct TaskRow: Sendable, Equatable {
  var id: TaskId
  var kind: TaskKind
  var state: TaskState
  var nextRun: WallInstant?
  var attempt: Int
  var deferrals: Int
  var lastResult: LastResult?
  var lastReason: String?
  var lastRunStartedAt: WallInstant?
  var lastRunEndedAt: WallInstant?
  /// Condition predicates only (network, power, registration); time predicates are derived.
  var blockedOn: [PendingPredicate]
  var ephemeral: Bool
  var constraints: WorkConstraints
  var interval: Duration?
  var flexWindow: Duration?
  var initialDelay: Duration
  var hint: ExecutionHint
  var budget: Duration
  var backoff: BackoffPolicy
  var input: Data
  var scheduledAt: WallInstant
  var updatedAt: WallInstant
  /// The calendar of a calendar-scheduled periodic task.
  var calendar: CalendarSchedule? {
    get { calendarStorage?.wrappedValue }
    set { calendarStorage = newValue.map(OutOfLine.init(wrappedValue:)) }
  }
  /// ``calendar``, out of line: 250 bytes inline, of a row of 630 that the dispatcher keeps
  /// for each task, and most tasks have none.
  var calendarStorage: OutOfLine<CalendarSchedule>?
  /// The calendar elapse the task last ran for (its scheduling time until the first run):
  /// elapses after it and not after now were missed.
  var lastElapse: WallInstant?
  /// What a run holds against system sleep and shutdown (migration `i27-inhibit`).
  var inhibitPolicy: InhibitPolicy
  /// When the run in flight was paused (`on-condition-lost = "pause"`), nil while it is not
  /// (migration `task-pause-on-condition-lost`).
  var pausedAt: WallInstant?
  /// The lost condition the run in flight is paused for.
  var pauseReason: StopReason?
  /// When this task became due and started waiting for its conditions, until a run succeeds
  /// (``ConstraintRelaxation``; migration `relax-after`): kept so that a restart does not
  /// restart the wait.
  var waitingSince: WallInstant?

  init(request: WorkRequest, input: Data, now: WallInstant) {
    id = request.taskId
    state = .pending
    attempt = 0
    deferrals = 0
    lastResult = nil
    lastReason = nil
    lastRunStartedAt = nil
    lastRunEndedAt = nil
    blockedOn = []
    self.input = input
    scheduledAt = now
    updatedAt = now
    switch request {
    case .oneTime(let request):
      kind = .oneTime
      nextRun = now.advanced(by: request.initialDelay)
      ephemeral = request.ephemeral
      constraints = request.constraints
      interval = nil
      flexWindow = nil
      initialDelay = request.initialDelay
      hint = request.executionHint
      budget = request.budget
      backoff = request.backoff
      inhibitPolicy = request.inhibitPolicy
    case .periodic(let request):
      kind = .periodic
      nextRun = now
      ephemeral = request.ephemeral
      constraints = request.constraints
      interval = request.interval
      flexWindow = request.flexWindow
      if let schedule = request.calendar {
        calendarStorage = OutOfLine(wrappedValue: schedule)
        lastElapse = now
        nextRun = schedule.due(lastElapse: now, now: now)?.startAt
        interval = nil
        flexWindow = nil
      }
      initialDelay = .zero
      hint = .standard
      budget = request.budget
      backoff = request.backoff
      inhibitPolicy = request.inhibitPolicy
    }
  }

  static func encode(_ predicates: [PendingPredicate]) -> String {
    predicates.compactMap { predicate -> String? in
      switch predicate {
      case .networkRequired(let requirement): "network:\(requirement.rawValue)"
      case .workingInternet(let connectivity): "internet:\(connectivity.rawValue)"
      case .requiresCharging: "charging"
      case .requiresBatteryNotLow: "batteryNotLow"
      case .workerNotRegistered: "notRegistered"
      case .wifiNetwork, .networkInterface, .mounted, .notRoaming, .reachable, .meteredBudget,
        .userIdle:
        PlacePredicateCoding.encode(predicate)
      case .waitingForBackoff, .waitingForEarliestBeginDate, .waitingForWindow: nil
      }
    }.joined(separator: ",")
  }

  /// The predicates in `text` (as ``encode(_:)`` writes them); nil if one is unknown.
  static func decode(_ text: String) -> [PendingPredicate]? {
    if text.isEmpty { return [] }
    let predicates = text.split(separator: ",").compactMap { item -> PendingPredicate? in
      switch item {
      case "charging": .requiresCharging
      case "batteryNotLow": .requiresBatteryNotLow
      case "notRegistered": .workerNotRegistered
      default:
        if item.hasPrefix("network:"),
          let requirement = NetworkRequirement(rawValue: String(item.dropFirst(8)))
        {
          .networkRequired(requirement)
        } else if item.hasPrefix("internet:"),
          let connectivity = InternetConnectivity(rawValue: String(item.dropFirst(9)))
        {
          .workingInternet(connectivity)
        } else {
          PlacePredicateCoding.decode(item)
        }
      }
    }
    let count = text.split(separator: ",").count
    return predicates.count == count ? predicates : nil
  }
}

/// One entry of a task's recent history.
public struct RunRecord: Hashable, Sendable, Encodable {
  /// The attempt within its cycle (0-based).
  public var attempt: Int
  /// When the worker was invoked (`nil` when it never was, e.g. a deferral).
  public var startedAt: Date?
  /// When the outcome was recorded.
  public var endedAt: Date
  /// success, failure, retry, deferred, expired, interrupted, stopped, skipped.
  public var outcome: String
  /// Why.
  public var reason: String?
  /// The conditions the run started under, in words (``RunConditions``); nil when it never
  /// started or was recorded before they were kept. Not part of `status`'s JSON.
  public var conditions: String? = nil
  /// The last output the worker recorded (at most 4 KiB); not part of `status`'s JSON.
  public var outputTail: String? = nil
  /// How a stopped run ended (``WorkContext/recordStop(_:)``: `stopped with SIGINT`, `killed
  /// with SIGKILL after 30 s`); nil when it was not stopped or its worker did not say. Not part
  /// of `status`'s JSON.
  public var stop: String? = nil
  /// The bytes the run sent and received (``RunNetworkBytes``), read with its history from
  /// the store's `run_network_bytes`; nil when none were counted (the worker never started,
  /// an embedder that counts none, a run recorded before bytes were counted). Not part of
  /// `status`'s JSON.
  public var network: RunNetworkBytes? = nil

  /// Encodes with ISO 8601 times.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(attempt, forKey: .attempt)
    try container.encode(startedAt.map(ISO8601.string), forKey: .startedAt)
    try container.encode(ISO8601.string(endedAt), forKey: .endedAt)
    try container.encode(outcome, forKey: .outcome)
    try container.encode(reason, forKey: .reason)
  }

  private enum CodingKeys: String, CodingKey { case attempt, startedAt, endedAt, outcome, reason }
}

/// A history row to append.
struct RunRow: Sendable, Equatable {
  var taskId: TaskId
  var attempt: Int
  var startedAt: WallInstant?
  var endedAt: WallInstant
  var outcome: String
  var reason: String?
  /// The conditions the run started under (migration `i29-run-detail`).
  var conditions: String? = nil
  /// The tail of the run's output (migration `i29-run-detail`).
  var outputTail: String? = nil
  /// How a stopped run ended (migration `run-stop-signal`).
  var stop: String? = nil
}

/// A change the writer applies, in order.
enum StoreOp: Sendable, Equatable {
  case upsert(TaskRow)
  /// The worker of a claim made ahead was invoked: `row` as it is now, of which only the
  /// columns a start changes are written (unless the batch also writes the whole row).
  case markStarted(TaskRow)
  case delete(TaskId)
  case deleteAll
  case appendRun(RunRow)
  /// A run's counted network bytes (``MeteredUsageStore``), committed with the runs' changes.
  case recordNetworkBytes(RunNetworkRecord)
}
