import Backgrounder
import Foundation
import Locking
import Reachability

/// The `[network]` settings the daemon's condition sources were made with, and which of them
/// the config file has changed since. A reload applies the metered overrides (`metered`,
/// `unmetered`, `metered-ssids`, `unmetered-ssids`) to the running reachability monitor
/// (``liveKeys``); the other keys are taken by the hint services (NetworkManager,
/// ModemManager, nl80211) and the connectivity probe when they start, and a reload cannot hand
/// them new ones, so a reload that finds one of those changed says so (in the journal, and as a
/// health problem that `status` and `doctor` show) instead of leaving the daemon and `status`
/// silently disagreeing (issue #34).
final class RestartNeeded: Sendable {
  private let running: [(key: String, value: String)]
  private let changed = Lock<(keys: [String], since: Date?)>(([], nil))

  /// Remembers the settings of `configuration`, the one the sources were made with.
  init(running configuration: DaemonConfiguration) {
    running = Self.networkSettings(of: configuration)
  }

  /// The `[network]` keys whose value in `configuration` differs from the running one, in the
  /// file's order; and remembers them (empty: the file agrees with the daemon again).
  @discardableResult
  func compare(with configuration: DaemonConfiguration, at now: Date = Date()) -> [String] {
    let newer = Self.networkSettings(of: configuration)
    let keys = zip(running, newer).compactMap { old, new in old.value == new.value ? nil : old.key }
    changed.withLock { state in
      if keys.isEmpty {
        state = ([], nil)
      } else {
        state = (keys, state.since ?? now)
      }
    }
    return keys
  }

  /// The problem to report while the file differs from what runs, else none.
  var problems: [HealthProblem] {
    let (keys, since) = changed.withLock { $0 }
    guard !keys.isEmpty else { return [] }
    return [
      HealthProblem(kind: .configRestartNeeded, detectedAt: since, message: Self.message(keys))
    ]
  }

  /// "config changed, restart needed: [network] networkmanager, source-timeout …".
  static func message(_ keys: [String]) -> String {
    "config changed, restart needed: [network] \(keys.joined(separator: ", ")) changed in the "
      + "config file; the daemon still uses the values it started with until it restarts"
  }

  /// The `[network]` keys a reload applies to the running daemon.
  static let liveKeys = ["metered", "unmetered", "metered-ssids", "unmetered-ssids"]

  /// The live keys whose value differs between `old` and `new` overrides, in the file's order.
  static func liveChanges(from old: InterfaceOverrides, to new: InterfaceOverrides) -> [String] {
    zip(
      liveKeys,
      [
        old.metered != new.metered, old.unmetered != new.unmetered,
        old.meteredSSIDs != new.meteredSSIDs, old.unmeteredSSIDs != new.unmeteredSSIDs,
      ]
    ).compactMap { key, changed in changed ? key : nil }
  }

  /// Every `[network]` key a reload cannot apply, with its value in words, in a fixed order.
  private static func networkSettings(of configuration: DaemonConfiguration)
    -> [(key: String, value: String)]
  {
    [
      ("networkmanager", "\(configuration.useNetworkManager)"),
      ("modemmanager", "\(configuration.useModemManager)"),
      (
        "connectivity-check",
        configuration.connectivityCheck.map { "\($0.url) \($0.expect)" } ?? "none"
      ),
      ("source-timeout", "\(configuration.sourceTimeout)"),
      ("stale-hints", "\(configuration.staleHints)"),
    ]
  }
}

extension HealthProblem.Kind {
  /// The config file changed `[network]` keys since the daemon started; they apply only after
  /// a restart (the daemon's health, from a reload on).
  package static let configRestartNeeded = HealthProblem.Kind(rawValue: "configRestartNeeded")
}
