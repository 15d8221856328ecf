/// One change of a task, streamed by the daemon to `status --watch` (request ``ControlRequest/watch``).
public struct TaskChange: Sendable, Equatable, Codable {
  /// What happened.
  public enum Kind: String, Sendable, Codable {
    case scheduled, started, finished, deferred, cancelled
    /// The daemon hit an error it could not attribute to a run (e.g. a store write).
    case error
  }

  /// When it happened (RFC 3339).
  public var time: String
  /// The job id (nil for daemon-wide errors).
  public var task: String?
  /// What happened.
  public var change: Kind
  /// Details in words: the attempt, the result, the reason.
  public var detail: String?

  public init(time: String, task: String?, change: Kind, detail: String?) {
    self.time = time
    self.task = task
    self.change = change
    self.detail = detail
  }
}
