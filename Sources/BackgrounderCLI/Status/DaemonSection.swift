import BackgrounderDaemon
import Foundation
import PowerSource

/// The `daemon` section of `status`: asks the control socket who serves the store. No answer
/// means no daemon runs it; a socket we may not use is reported with its reason.
struct DaemonSection: Sendable {
  let socketPath: String

  /// What `status` prints under `"daemon"`.
  struct Report: Encodable, Equatable {
    var running: Bool
    var pid: Int32?
    var since: String?
    var version: String?
    /// The daemon's last store write error (disk full, read-only), when it failed.
    var storeError: String?
    /// The daemon's systemd-logind inhibitors and the locks of its runs (absent: not said).
    var inhibitors: InhibitorsInfo?
    /// Whether `wake-system` jobs can wake the machine (see ``DaemonInfo/wakeAlarms``).
    var wakeAlarms: String?
    var wakeAlarmsReason: String?
    /// How the daemon counts runs' bytes (`cgroup`, `link`) and why.
    var runBytes: String?
    var runBytesReason: String?
    /// Why the socket could not be asked (not "nobody listens").
    var error: String?
    /// The daemon's network and power view (what its jobs are gated by).
    var view: DaemonView?
    /// The daemon's `[network] metered-budget` and its use (the document's top-level
    /// `"meteredBudget"`, not part of `"daemon"`).
    var meteredBudget: MeteredBudgetReport?

    private enum CodingKeys: String, CodingKey {
      case running, pid, since, version, storeError, inhibitors, wakeAlarms, wakeAlarmsReason
      case runBytes, runBytesReason, error, view
    }

    /// The report of a daemon that answered with `info`.
    init(answeredBy info: DaemonInfo) {
      self.init(
        running: true, pid: info.pid, since: info.since, version: info.version,
        storeError: info.storeError)
      inhibitors = info.inhibitors
      wakeAlarms = info.wakeAlarms
      wakeAlarmsReason = info.wakeAlarmsReason
      runBytes = info.runBytes?.accounting.rawValue
      runBytesReason = info.runBytes?.reason
      view = info.view
      meteredBudget = info.meteredBudget
    }

    init(
      running: Bool, pid: Int32? = nil, since: String? = nil, version: String? = nil,
      storeError: String? = nil, error: String? = nil
    ) {
      self.running = running
      self.pid = pid
      self.since = since
      self.version = version
      self.storeError = storeError
      self.error = error
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(running, forKey: .running)
      try container.encode(pid, forKey: .pid)
      try container.encode(since, forKey: .since)
      try container.encode(version, forKey: .version)
      try container.encode(storeError, forKey: .storeError)
      try container.encodeIfPresent(inhibitors, forKey: .inhibitors)
      try container.encodeIfPresent(wakeAlarms, forKey: .wakeAlarms)
      try container.encodeIfPresent(wakeAlarmsReason, forKey: .wakeAlarmsReason)
      try container.encodeIfPresent(runBytes, forKey: .runBytes)
      try container.encodeIfPresent(runBytesReason, forKey: .runBytesReason)
      try container.encodeIfPresent(error, forKey: .error)
      try container.encodeIfPresent(view, forKey: .view)
    }
  }

  func read() -> Report {
    do {
      let response = try ControlClient(path: socketPath, timeout: .seconds(2))
        .sendBlocking(.ping)
      guard let info = response.daemon else { return Report(running: true) }
      return Report(answeredBy: info)
    } catch .noDaemon {
      return Report(running: false)
    } catch {
      return Report(running: false, error: "\(error)")
    }
  }

  /// The lines of the human report.
  static func text(_ report: Report, socketPath: String) -> [String] {
    var lines: [String]
    if report.running {
      lines = [
        "Daemon: running (pid \(report.pid.map(String.init) ?? "?"), since "
          + "\(report.since ?? "?"), version \(report.version ?? "?"))"
      ]
    } else if let error = report.error {
      lines = ["Daemon: unknown (\(error))"]
    } else {
      lines = ["Daemon: not running (no answer on \(socketPath))"]
    }
    if let storeError = report.storeError { lines.append("  store error: \(storeError)") }
    if let inhibitors = report.inhibitors { lines += inhibitorLines(inhibitors) }
    if let wakeAlarms = report.wakeAlarms {
      let words =
        switch wakeAlarms {
        case "available": "available (wake-system jobs wake the machine)"
        case "unavailable": "unavailable: " + (report.wakeAlarmsReason ?? "unknown reason")
        case "unused": "no wake-system job"
        default: "not needed yet"
        }
      lines.append("  wake alarms: \(words)")
    }
    if let runBytes = report.runBytes {
      let how =
        runBytes == "cgroup"
        ? "counted per run by the kernel"
        : "from the primary link's counters (approximate)"
      lines.append("  run bytes: \(how)" + (report.runBytesReason.map { ": \($0)" } ?? ""))
    }
    return lines
  }

  /// The daemon's view when it can differ from this process's, nil when the views are the
  /// same or no daemon answered. They can differ when the daemon runs in another network
  /// namespace than this process (a client in a container sharing the socket, or in another
  /// `ip netns`): the namespace ids (`net:[INODE]`, unique on the machine) differ, or this
  /// process cannot read its own. The power view is the machine's either way, but shown with
  /// the network view it gates jobs with: one view, one owner.
  static func viewElsewhere(_ report: Report) -> DaemonView? {
    guard report.running, let view = report.view, isElsewhere(view) else { return nil }
    return view
  }

  /// Whether `view` is from another network namespace than this process's.
  static func isElsewhere(_ view: DaemonView) -> Bool {
    let own = clientNetworkNamespace
    return own == nil || view.networkNamespace != own
  }

  /// This process's network namespace (every thread of the CLI shares it), read once.
  private static let clientNetworkNamespace = DaemonView.currentNetworkNamespace()

  /// The daemon's network view when it can differ from this process's (``viewElsewhere(_:)``),
  /// labelled as the daemon's; nil when the views are the same.
  static func networkLines(_ report: Report) -> [String]? {
    guard let view = viewElsewhere(report) else { return nil }
    return networkLines(view)
  }

  /// The daemon's network view, labelled as the daemon's.
  static func networkLines(_ view: DaemonView) -> [String] {
    let namespace = view.networkNamespace.map { " in \($0)" } ?? ""
    guard view.reachable, let link = view.primaryLink else {
      return [
        "Network (the daemon's view\(namespace)): not reachable (no usable default route)",
        "Metered: no (nothing reachable)",
      ]
    }
    let type = view.primaryLinkType.map { " (\($0))" } ?? ""
    let reason = view.meteredReason.map { ", \(NetworkStatusText.escaped($0))" } ?? ""
    return [
      "Network (the daemon's view\(namespace)): reachable via "
        + "\(NetworkStatusText.escaped(link))\(type)",
      "Metered: \(view.metered ? "yes" : "no")\(reason)",
    ]
  }

  /// `  inhibitors: available`, then one line per run's lock:
  /// `  inhibitor: dev.example.backup holds a delay lock`.
  static func inhibitorLines(_ inhibitors: InhibitorsInfo) -> [String] {
    let availability =
      switch inhibitors.availability {
      case "available": "available (systemd-logind)"
      case "absent": "unavailable: systemd-logind is not there"
      case "refused": "refused by systemd-logind"
      default: "not asked for yet"
      }
    let reason = inhibitors.reason.map { " (\($0))" } ?? ""
    return ["  inhibitors: \(availability)\(reason)"]
      + inhibitors.locks.map { lock in
        lock.held
          ? "  inhibitor: \(lock.job) holds a \(lock.mode) lock"
          : "  inhibitor: \(lock.job) has no \(lock.mode) lock (asked for, not given)"
      }
  }
}

/// Whose network and power view a `status --json` document or `--watch --json` line shows, its
/// `viewOf` key: `"daemon"` when the running daemon's view can differ from the client's (it
/// runs in another network namespace) and it answered, then `network` and `power` are the
/// daemon's (``DaemonNetworkView``, ``DaemonPowerView``); else `"client"`, this process's own.
enum ViewOf: String, Encodable {
  case daemon, client
}

/// The `network` section when it is the daemon's view (`"viewOf": "daemon"`): the keys of the
/// client's section that the daemon sends (`reachable`, `metered`, `primary`), plus
/// `primaryType`, `meteredReason` (in words) and `networkNamespace` (the daemon's).
struct DaemonNetworkView: Encodable {
  var view: DaemonView

  private enum CodingKeys: String, CodingKey {
    case reachable, metered, primary, primaryType, meteredReason, networkNamespace
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(view.reachable, forKey: .reachable)
    try container.encode(view.metered, forKey: .metered)
    try container.encode(view.primaryLink, forKey: .primary)
    try container.encode(view.primaryLinkType, forKey: .primaryType)
    try container.encode(view.meteredReason, forKey: .meteredReason)
    try container.encode(view.networkNamespace, forKey: .networkNamespace)
  }
}

/// The `power` section when it is the daemon's view (`"viewOf": "daemon"`): `externalPower`,
/// `charging`, `batteryPercent`, `batteryLow` (no `supplies`).
struct DaemonPowerView: Encodable {
  var view: DaemonView

  private enum CodingKeys: String, CodingKey {
    case externalPower, charging, batteryPercent, batteryLow
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(view.externalPower, forKey: .externalPower)
    try container.encode(view.charging, forKey: .charging)
    try container.encode(view.batteryPercent, forKey: .batteryPercent)
    try container.encode(view.batteryLow, forKey: .batteryLow)
  }
}

extension DaemonView {
  /// The power part as a ``PowerStatus`` (without supplies), for the words of a power line.
  var powerStatus: PowerStatus {
    PowerStatus(
      externalPower: externalPower, charging: charging, batteryPercent: batteryPercent,
      batteryLow: batteryLow, supplies: [])
  }
}
