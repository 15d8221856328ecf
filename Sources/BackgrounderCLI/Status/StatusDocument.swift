import Backgrounder
import BackgrounderDaemon
import PowerSource
import Reachability

/// The JSON document `status --json` prints: `{"network": {...}, "power": {...}, "tasks": [...],
/// "health": {"healthy": ..., "problems": [...]}, "daemon": {...}, "viewOf": "client"}`, plus
/// `observedAt` in `--watch` lines and `meteredBudget` (``MeteredBudgetReport``) when the
/// daemon has a `[network] metered-budget`.
struct StatusDocument: Encodable {
  /// RFC 3339 time with microseconds; only in `--watch` lines.
  var observedAt: String?
  /// The reachability section.
  var network: NetworkStatus
  /// The power section.
  var power: PowerStatus
  /// The tasks in the store; `null` when the store could not be read.
  var tasks: [TaskStatus]?
  /// The running daemon's detected problems and the store checks of `status`.
  var health: HealthReport
  /// Whether a daemon serves the store.
  var daemon: DaemonSection.Report
  /// The running daemon's view when it can differ from this process's
  /// (``DaemonSection/viewElsewhere(_:)``): then `network` and `power` are its view, and
  /// `viewOf` says `"daemon"`.
  var daemonView: DaemonView?

  /// Whose view `network` and `power` are.
  var viewOf: ViewOf { daemonView == nil ? .client : .daemon }

  private enum CodingKeys: String, CodingKey {
    case observedAt, network, power, tasks, health, daemon, viewOf, meteredBudget
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(observedAt, forKey: .observedAt)
    if let daemonView {
      try container.encode(DaemonNetworkView(view: daemonView), forKey: .network)
      try container.encode(DaemonPowerView(view: daemonView), forKey: .power)
    } else {
      try container.encode(network, forKey: .network)
      try container.encode(power, forKey: .power)
    }
    try container.encode(tasks, forKey: .tasks)
    try container.encode(health, forKey: .health)
    try container.encode(daemon, forKey: .daemon)
    try container.encodeIfPresent(daemon.meteredBudget, forKey: .meteredBudget)
    try container.encode(viewOf, forKey: .viewOf)
  }
}
