import BackgrounderLinux
import Logging
import NetworkHints
import Reachability
import ServiceLifecycle

extension DaemonConfiguration {
  /// The metered overrides of `[network]` (`metered`, `unmetered`, `metered-ssids`,
  /// `unmetered-ssids`): the monitor's at start, and again at each reload.
  package var meteredOverrides: InterfaceOverrides {
    InterfaceOverrides(
      metered: meteredInterfaces, unmetered: unmeteredInterfaces, meteredSSIDs: meteredSSIDs,
      unmeteredSSIDs: unmeteredSSIDs)
  }

  /// The monitor's settings from `[network]`.
  package func reachabilityConfiguration(sysfsRoot: String) -> ReachabilityConfiguration {
    ReachabilityConfiguration(
      sysfsRoot: sysfsRoot, meteredOverrides: meteredInterfaces,
      unmeteredOverrides: unmeteredInterfaces, meteredSSIDs: meteredSSIDs,
      unmeteredSSIDs: unmeteredSSIDs)
  }

  /// NetworkManager and nl80211 settings from `[network]` (`networkmanager`, `source-timeout`,
  /// `stale-hints`); the `DBUS_SYSTEM_BUS_ADDRESS` environment variable picks another bus.
  package var hintsConfiguration: NetworkHintsConfiguration {
    NetworkHintsConfiguration(
      useNetworkManager: useNetworkManager, sourceTimeout: sourceTimeout, staleHints: staleHints,
      useModemManager: useModemManager)
  }

  /// Every live condition source as `[network]` asks: what the daemon runs.
  package func linuxSourceOptions(sysfsRoot: String) -> LinuxConditionSources.Options {
    LinuxConditionSources.Options(
      reachability: reachabilityConfiguration(sysfsRoot: sysfsRoot), hints: hintsConfiguration,
      connectivityCheck: connectivityCheck, sysfsRoot: sysfsRoot)
  }

  /// The services feeding `monitor` with link hints: NetworkManager over the system bus and
  /// nl80211 SSIDs, plus the connectivity probe when `[network] connectivity-check` is set.
  package func networkHintServices(monitor: ReachabilityMonitor, logger: Logger) -> [any Service] {
    var services: [any Service] = [
      NetworkHintsService(monitor: monitor, configuration: hintsConfiguration, logger: logger)
    ]
    if let connectivityCheck {
      services.append(
        ConnectivityProber(monitor: monitor, check: connectivityCheck, logger: logger))
    }
    return services
  }
}
