import Backgrounder
import NetworkHints

/// The whole config file: where state lives, network overrides, and the jobs.
public struct DaemonConfiguration: Sendable, Equatable {
  /// The file this configuration was read from.
  package var sourcePath: String
  /// `[store] path`: the SQLite state file.
  package var storePath: String
  /// `[network] metered`: globs on interface names forced to metered.
  package var meteredInterfaces: [String] = []
  /// `[network] unmetered`: globs on interface names forced to unmetered.
  package var unmeteredInterfaces: [String] = []
  /// `[network] metered-ssids`: globs on Wi-Fi SSIDs forced to metered (phone hotspots).
  package var meteredSSIDs: [String] = []
  /// `[network] unmetered-ssids`: globs on Wi-Fi SSIDs forced to unmetered.
  package var unmeteredSSIDs: [String] = []
  /// `[network] networkmanager`: ask NetworkManager over D-Bus (default true).
  package var useNetworkManager = true
  /// `[network] modemmanager`: ask ModemManager over D-Bus which links roam (default true).
  package var useModemManager = true
  /// `[network] connectivity-check`: the opt-in HTTP connectivity probe, if set.
  package var connectivityCheck: ConnectivityCheck?
  /// `[network] source-timeout`: how long a hint source (NetworkManager) may take to answer,
  /// for a whole read, before it is treated as absent with a health problem (default 5 s).
  package var sourceTimeout = NetworkHintsConfiguration.defaultSourceTimeout
  /// `[network] stale-hints`: how long NetworkManager's last answer is kept, marked stale,
  /// after it left the bus; then the kernel signals decide (default 2 min).
  package var staleHints = NetworkHintsConfiguration.defaultStaleHints
  /// `[network] metered-budget` (with `reset`): all jobs' metered bytes in a window; when
  /// spent every job needing the network waits for an unmetered link. `nil`: no budget.
  package var meteredBudget: MeteredBudget?
  /// `[control] socket`: the daemon's control socket.
  package var controlSocketPath: String
  /// `[metrics] file`: a Prometheus textfile written after every change, if set.
  package var metricsFile: String?
  /// `[telemetry]`: runs exported to an OpenTelemetry Collector; nil when off.
  package var telemetry: TelemetrySettings?
  /// `[daemon] max-concurrent`: how many jobs may run at once.
  package var maxConcurrentJobs = 2
  /// `[daemon] start-splay`: the time the runs that became due while the daemon was off or the
  /// system slept spread over after a start or a resume (``StartSplayKey``); zero: off.
  package var startSplay = StartSplayKey.defaultValue
  /// `[[job]]` entries, in file order.
  public var jobs: [JobDefinition] = []
  /// Each job's ``JobDigest``, by job id (none when this build has no build ID).
  package var jobDigests: [String: String] = [:]
  /// The alert settings of the `[[job]]` entries that have any (`alert-after`, `on-failure`,
  /// `on-stale`), by job id.
  package var alerts: [String: JobAlerts] = [:]
  /// `[notify] desktop`: freedesktop desktop notices of failures and stale jobs on the session
  /// bus (default false).
  package var desktopNotices = false
  /// `[daemon] on-failure` and `on-stale`: the hooks of every job that sets none of its own.
  package var alertDefaults = JobAlerts()

  /// A configuration with no jobs, using the default locations for the current user.
  package init(sourcePath: String, locations: DefaultLocations = .current()) {
    self.sourcePath = sourcePath
    self.storePath = locations.storePath
    self.controlSocketPath = locations.controlSocketPath
  }
}
