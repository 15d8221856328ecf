import Logging
import NetworkHints
import Reachability
import ServiceLifecycle

extension DaemonConfiguration {
  /// The monitor's settings from `[network]`.
  public func reachabilityConfiguration(sysfsRoot: String) -> ReachabilityConfiguration {
    ReachabilityConfiguration(
      sysfsRoot: sysfsRoot, meteredOverrides: meteredInterfaces,
      unmeteredOverrides: unmeteredInterfaces, meteredSSIDs: meteredSSIDs,
      unmeteredSSIDs: unmeteredSSIDs)
  }

  /// The services feeding `monitor` with link hints: NetworkManager over the system bus (the
  /// `DBUS_SYSTEM_BUS_ADDRESS` environment variable picks another bus) and nl80211 SSIDs, plus
  /// the connectivity probe when `[network] connectivity-check` is set.
  public func networkHintServices(monitor: ReachabilityMonitor, logger: Logger) -> [any Service] {
    var services: [any Service] = [
      NetworkHintsService(
        monitor: monitor,
        configuration: NetworkHintsConfiguration(useNetworkManager: useNetworkManager),
        logger: logger)
    ]
    if let connectivityCheck {
      services.append(
        ConnectivityProber(monitor: monitor, check: connectivityCheck, logger: logger))
    }
    return services
  }
}
