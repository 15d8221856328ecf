import Foundation

/// Who serves a store: what the daemon answers to `ping`, and what `status` shows under
/// `"daemon"`.
public struct DaemonInfo: Sendable, Equatable, Codable {
  /// The daemon's process id.
  package var pid: Int32
  /// When it started (RFC 3339).
  package var since: String
  /// Its version.
  package var version: String
  /// The store it serves.
  package var storePath: String
  /// The error of its last store write when that failed (disk full, read-only), else nil.
  package var storeError: String?
  /// Its systemd-logind inhibitors: whether logind gives locks, and the runs' locks (nil from
  /// a daemon that does not say).
  package var inhibitors: InhibitorsInfo?
  /// Whether `wake-system` jobs can wake the machine: `unused` (no such job), `unknown` (no
  /// alarm needed yet), `available` or `unavailable` (nil from a daemon that does not say).
  package var wakeAlarms: String?
  /// Why wake alarms are unavailable.
  package var wakeAlarmsReason: String?
  /// The daemon's network and power view (nil from a daemon that does not say).
  package var view: DaemonView?
  /// The daemon's `[network] metered-budget` and its use now (nil: none set, or a daemon that
  /// does not say).
  package var meteredBudget: MeteredBudgetReport?
  /// How the daemon counts runs' bytes (`cgroup` or `link`) and why (nil from a daemon that
  /// does not say).
  package var runBytes: RunBytesChoice?

  package init(
    pid: Int32, since: String, version: String, storePath: String, storeError: String?,
    inhibitors: InhibitorsInfo? = nil, wakeAlarms: String? = nil, wakeAlarmsReason: String? = nil
  ) {
    self.pid = pid
    self.since = since
    self.version = version
    self.storePath = storePath
    self.storeError = storeError
    self.inhibitors = inhibitors
    self.wakeAlarms = wakeAlarms
    self.wakeAlarmsReason = wakeAlarmsReason
  }

  /// This build's version.
  package static let version = "0.1.0"
}
