import Backgrounder
import Foundation
import Locking

/// The `[network]` settings the daemon's condition sources were made with, and which of them
/// the config file has changed since. The reachability monitor, the hint services
/// (NetworkManager, ModemManager, nl80211) and the connectivity probe take their settings when
/// they start and a reload cannot hand them new ones, so a reload that finds `[network]`
/// changed says so (in the journal, and as a health problem that `status` and `doctor` show)
/// instead of leaving the daemon and `status` silently disagreeing (issue #34).
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

  /// "config changed, restart needed: [network] metered, unmetered …".
  static func message(_ keys: [String]) -> String {
    "config changed, restart needed: [network] \(keys.joined(separator: ", ")) changed in the "
      + "config file; the daemon still uses the values it started with until it restarts"
  }

  /// Every `[network]` key with its value in words, in a fixed order.
  private static func networkSettings(of configuration: DaemonConfiguration)
    -> [(key: String, value: String)]
  {
    [
      ("metered", "\(configuration.meteredInterfaces)"),
      ("unmetered", "\(configuration.unmeteredInterfaces)"),
      ("metered-ssids", "\(configuration.meteredSSIDs)"),
      ("unmetered-ssids", "\(configuration.unmeteredSSIDs)"),
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
