import Reachability

/// One change of a task, streamed by the daemon to `status --watch` (request ``ControlRequest/watch``).
public struct TaskChange: Sendable, Equatable, Codable {
  /// What happened.
  public enum Kind: String, Sendable, Codable {
    case scheduled, started, finished, deferred, cancelled
    /// A run was frozen (`on-condition-lost = "pause"`), or thawed.
    case paused, resumed
    /// The daemon hit an error it could not attribute to a run (e.g. a store write).
    case error
    /// The daemon's view of the network changed (``TaskChange/hints``): the first message of
    /// every stream, then one per change. `status --watch` applies it rather than asking
    /// NetworkManager itself; it is not printed as a task change.
    case network
  }

  /// When it happened (RFC 3339).
  public var time: String
  /// The job id (nil for daemon-wide errors).
  public var task: String?
  /// What happened.
  public var change: Kind
  /// Details in words: the attempt, the result, the reason.
  public var detail: String?
  /// The daemon's hints (NetworkManager's answers, the probe's verdict, each source's state),
  /// in ``Kind/network`` changes only.
  public var hints: LinkHints?

  public init(
    time: String, task: String?, change: Kind, detail: String?, hints: LinkHints? = nil
  ) {
    self.time = time
    self.task = task
    self.change = change
    self.detail = detail
    self.hints = hints
  }
}
