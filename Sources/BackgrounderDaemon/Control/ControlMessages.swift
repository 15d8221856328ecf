import Backgrounder
import Reachability

/// A request sent by a CLI verb to a running daemon over the control socket (one JSON line).
public enum ControlRequest: Sendable, Equatable, Codable {
  /// Is anyone there? The answer carries ``DaemonInfo``.
  case ping
  /// Run the job now, bypassing constraints and backoff.
  case trigger(id: String)
  /// Simulate budget expiry of the job's running attempt.
  case expire(id: String)
  /// Cancel the job.
  case cancel(id: String)
  /// Schedule (or update) a job that is not in the config file.
  case schedule(JobDefinition)
  /// Re-read the config file, as on SIGHUP.
  case reload
  /// The runtime's health: the response carries the detected problems, and ``DaemonInfo``.
  case health
  /// Keep the connection open and stream ``TaskChange`` lines after the response.
  case watch
}

/// The daemon's answer to a `ControlRequest`.
public struct ControlResponse: Sendable, Equatable, Codable {
  /// Whether the request took effect.
  package var ok: Bool
  /// What happened, in words, for the operator.
  package var message: String
  /// The runtime's detected problems (`health` requests only).
  package var problems: [HealthProblem]?
  /// Who answered (in the answers to `ping` and `health`).
  package var daemon: DaemonInfo?
  /// The daemon's view of the network beyond the kernel's tables: NetworkManager's answers,
  /// the probe's verdict, each source's state and stale marks (`health` only). `status` shows
  /// these instead of asking NetworkManager itself: one truth per machine.
  package var hints: LinkHints?

  public init(
    ok: Bool, message: String, problems: [HealthProblem]? = nil, daemon: DaemonInfo? = nil,
    hints: LinkHints? = nil
  ) {
    self.ok = ok
    self.message = message
    self.problems = problems
    self.daemon = daemon
    self.hints = hints
  }
}
