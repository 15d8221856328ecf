import Foundation

/// A problem the runtime detected, as ``Backgrounder/diagnostics()`` reports it.
///
/// Encodes as `{"kind": ..., "taskId": ..., "detectedAt": ..., "message": ...}` with an
/// ISO 8601 time; absent values are `null`.
public struct HealthProblem: Hashable, Sendable, Codable, CustomStringConvertible {
  /// What kind of problem it is. New kinds may be added in later versions: compare with the
  /// static members rather than switching exhaustively.
  public struct Kind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kind's stable name (used in JSON).
    public let rawValue: String

    /// A kind by its name.
    public init(rawValue: String) {
      self.rawValue = rawValue
    }

    /// A store write failed: the change it carried is not durable.
    public static let storeError = Kind(rawValue: "storeError")
    /// A condition source's updates ended while the runtime was running.
    public static let conditionSourceFailed = Kind(rawValue: "conditionSourceFailed")
    /// A condition source has not reported any conditions since ``Backgrounder/start()``
    /// within ``HealthProblem/silentSourceLimit``.
    public static let conditionSourceSilent = Kind(rawValue: "conditionSourceSilent")
    /// A worker ignored cancellation past the grace period and was abandoned.
    public static let workerAbandoned = Kind(rawValue: "workerAbandoned")
    /// A run is still in flight more than 1 s after its budget and the grace period have
    /// passed (the runtime should have ended it by then).
    public static let taskStuck = Kind(rawValue: "taskStuck")
    /// A condition source (NetworkManager) should answer but did not within its limit
    /// (`[network] source-timeout`): it is treated as absent.
    public static let conditionSourceTimedOut = Kind(rawValue: "conditionSourceTimedOut")
    /// A condition source (NetworkManager) left and stayed away longer than its stale limit
    /// (`[network] stale-hints`): its last answer was dropped.
    public static let conditionSourceGone = Kind(rawValue: "conditionSourceGone")
    /// The configuration names no network source: work that needs the network is held.
    public static let networkSourceMissing = Kind(rawValue: "networkSourceMissing")
    /// The configuration names no power source: power-constrained work is held.
    public static let powerSourceMissing = Kind(rawValue: "powerSourceMissing")
    /// The wall clock was set (stepped) while the runtime was running.
    public static let clockJump = Kind(rawValue: "clockJump")

    /// The kind's name.
    public var description: String { rawValue }
  }

  /// How long a condition source may stay silent after start before it is a problem (30 s).
  public static let silentSourceLimit: Duration = .seconds(30)

  /// What kind of problem it is.
  public var kind: Kind
  /// The task concerned, if the problem belongs to one.
  public var taskId: TaskId?
  /// When it was detected (the runtime's clock), if known.
  public var detectedAt: Date?
  /// What is wrong, in words.
  public var message: String

  /// Creates a problem report.
  public init(kind: Kind, taskId: TaskId? = nil, detectedAt: Date?, message: String) {
    self.kind = kind
    self.taskId = taskId
    self.detectedAt = detectedAt
    self.message = message
  }

  /// `kind: message`, with the task id when there is one.
  public var description: String {
    "\(kind)" + (taskId.map { " (\($0))" } ?? "") + ": \(message)"
  }

  private enum CodingKeys: String, CodingKey { case kind, taskId, detectedAt, message }

  /// Encodes with an ISO 8601 time and explicit `null`s.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(kind, forKey: .kind)
    try container.encode(taskId, forKey: .taskId)
    try container.encode(detectedAt.map(ISO8601.string), forKey: .detectedAt)
    try container.encode(message, forKey: .message)
  }

  /// Decodes what ``encode(to:)`` wrote.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    kind = try container.decode(Kind.self, forKey: .kind)
    taskId = try container.decodeIfPresent(TaskId.self, forKey: .taskId)
    message = try container.decode(String.self, forKey: .message)
    if let text = try container.decodeIfPresent(String.self, forKey: .detectedAt) {
      guard let date = ISO8601.date(text) else {
        throw DecodingError.dataCorruptedError(
          forKey: .detectedAt, in: container, debugDescription: "not an ISO 8601 time: \(text)")
      }
      detectedAt = date
    } else {
      detectedAt = nil
    }
  }
}

/// Which condition source a health problem concerns.
enum ConditionSourceName: String, Sendable {
  case network
  case power
}
