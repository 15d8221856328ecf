import Reachability

/// One change of a task, streamed by the daemon to `status --watch` (request ``ControlRequest/watch``).
package struct TaskChange: Sendable, Equatable, Codable {
  /// What happened.
  package enum Kind: String, Sendable, Codable {
    case scheduled, started, finished, deferred, cancelled
    /// A run was frozen (`on-condition-lost = "pause"`), or thawed.
    case paused, resumed
    /// The daemon hit an error it could not attribute to a run (e.g. a store write).
    case error
    /// The daemon's view of the network or power changed (``TaskChange/hints``,
    /// ``TaskChange/view``): the first message of every stream, then one per change.
    /// `status --watch` applies the hints rather than asking NetworkManager itself, and shows
    /// the view when it can differ from its own; it is not printed as a task change. (The view
    /// rides on this kind, not a kind of its own: a client of an older version rejects a kind
    /// it does not know, and ignores a key it does not know.)
    case network
  }

  /// When it happened (RFC 3339).
  package var time: String
  /// The job id (nil for daemon-wide errors).
  package var task: String?
  /// What happened.
  package var change: Kind
  /// Details in words: the attempt, the result, the reason.
  package var detail: String?
  /// The daemon's hints (NetworkManager's answers, the probe's verdict, each source's state),
  /// in ``Kind/network`` changes only.
  package var hints: LinkHints?
  /// The daemon's network and power view (what its jobs are gated by), in ``Kind/network``
  /// changes only; absent from daemons older than it.
  package var view: DaemonView?

  package init(
    time: String, task: String?, change: Kind, detail: String?, hints: LinkHints? = nil,
    view: DaemonView? = nil
  ) {
    self.time = time
    self.task = task
    self.change = change
    self.detail = detail
    self.hints = hints
    self.view = view
  }
}
