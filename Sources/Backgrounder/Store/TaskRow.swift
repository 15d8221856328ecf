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

  static let columns = [
    "id", "kind", "state", "nextRun", "attempt", "deferrals", "lastResult", "lastReason",
    "lastRunStartedAt", "lastRunEndedAt", "blockedOn", "ephemeral", "network",
    "requiresCharging", "requiresBatteryNotLow", "interval", "flexWindow", "initialDelay",
    "expedited", "budget", "backoffKind", "backoffInitial", "backoffMaxAttempts", "backoffJitter",
    "input", "scheduledAt", "updatedAt",
  ]

  var arguments: StatementArguments {
    let expedited: String? =
      switch hint {
      case .standard: nil
      case .expedited(let policy): policy.rawValue
      }
    let values: [(any DatabaseValueConvertible)?] = [
      id.rawValue, kind.rawValue, state.rawValue, nextRun?.nanosecondsSince1970, attempt,
      deferrals, lastResult?.rawValue, lastReason, lastRunStartedAt?.nanosecondsSince1970,
      lastRunEndedAt?.nanosecondsSince1970, Self.encode(blockedOn), ephemeral,
      constraints.networkRequired.rawValue, constraints.requiresCharging,
      constraints.requiresBatteryNotLow, interval?.nanoseconds, flexWindow?.nanoseconds,
      initialDelay.nanoseconds, expedited, budget.nanoseconds, backoff.kind.rawValue,
      backoff.initialDelay.nanoseconds, backoff.maxAttempts, backoff.jitter, input,
      scheduledAt.nanosecondsSince1970, updatedAt.nanosecondsSince1970,
    ]
    return StatementArguments(values)
  }

  /// Decodes a row selected with ``columns`` in order.
  init(row: Row) throws {
    func text<T: RawRepresentable>(_ index: Int, _: T.Type) throws -> T where T.RawValue == String {
      let raw: String = row[index]
      guard let value = T(rawValue: raw) else {
        throw StoreError.corrupt(
          path: "", detail: "column \(Self.columns[index]) has unknown value '\(raw)'")
      }
      return value
    }
    func instant(_ index: Int) -> WallInstant? {
      (row[index] as Int64?).map(WallInstant.init(nanosecondsSince1970:))
    }
    func duration(_ index: Int) -> Duration? {
      (row[index] as Int64?).map(Duration.nanoseconds)
    }
    let rawId: String = row[0]
    do {
      id = try TaskId(rawId)
    } catch {
      throw StoreError.corrupt(path: "", detail: "invalid task id '\(rawId)': \(error)")
    }
    kind = try text(1, TaskKind.self)
    state = try text(2, TaskState.self)
    nextRun = instant(3)
    attempt = row[4]
    deferrals = row[5]
    lastResult = try (row[6] as String?).map { raw in
      guard let value = LastResult(rawValue: raw) else {
        throw StoreError.corrupt(path: "", detail: "unknown lastResult '\(raw)'")
      }
      return value
    }
    lastReason = row[7]
    lastRunStartedAt = instant(8)
    lastRunEndedAt = instant(9)
    blockedOn = Self.decode(row[10])
    ephemeral = row[11]
    constraints = WorkConstraints(
      networkRequired: try text(12, NetworkRequirement.self), requiresCharging: row[13],
      requiresBatteryNotLow: row[14])
    interval = duration(15)
    flexWindow = duration(16)
    initialDelay = duration(17) ?? .zero
    if let policy = row[18] as String? {
      guard let value = QuotaExhaustedPolicy(rawValue: policy) else {
        throw StoreError.corrupt(path: "", detail: "unknown expedited policy '\(policy)'")
      }
      hint = .expedited(onQuotaExhausted: value)
    } else {
      hint = .standard
    }
    budget = duration(19) ?? WorkRequest.defaultBudget
    backoff = BackoffPolicy(
      kind: try text(20, BackoffPolicy.Kind.self), initialDelay: duration(21) ?? .seconds(30),
      maxAttempts: row[22], jitter: row[23])
    input = row[24] ?? Data()
    scheduledAt = instant(25) ?? WallInstant(nanosecondsSince1970: 0)
    updatedAt = instant(26) ?? scheduledAt
  }

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
    case .periodic(let request):
      kind = .periodic
      nextRun = now
      ephemeral = request.ephemeral
      constraints = request.constraints
      interval = request.interval
      flexWindow = request.flexWindow
      initialDelay = .zero
      hint = .standard
      budget = request.budget
      backoff = request.backoff
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
      case .waitingForBackoff, .waitingForEarliestBeginDate: nil
      }
    }.joined(separator: ",")
  }

  static func decode(_ text: String?) -> [PendingPredicate] {
    guard let text, !text.isEmpty else { return [] }
    return text.split(separator: ",").compactMap { item -> PendingPredicate? in
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
          nil
        }
      }
    }
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
}

/// A change the writer applies, in order.
enum StoreOp: Sendable, Equatable {
  case upsert(TaskRow)
  case delete(TaskId)
  case deleteAll
  case appendRun(RunRow)
}
