import Backgrounder
import PowerSource
import Reachability

/// The live reachability monitor as the runtime's network source.
public struct MonitoredNetwork: NetworkConditionSource {
  let monitor: ReachabilityMonitor

  public init(_ monitor: ReachabilityMonitor) {
    self.monitor = monitor
  }

  public var current: NetworkConditions { Self.conditions(monitor.status) }

  /// The monitor's own subscription, mapped as its reader takes each status (no task between).
  public func updates() -> some AsyncSequence<NetworkConditions, Never> & Sendable {
    monitor.statusUpdates().map(Self.conditions)
  }

  /// The runtime's view of `status`: a source still waiting for its first answer makes the
  /// conditions unknown (``NetworkConditions/unknownSources``), and so does unknown
  /// connectivity while a connectivity source is expected.
  public static func conditions(_ status: NetworkStatus) -> NetworkConditions {
    var conditions = NetworkConditions(
      isReachable: status.isReachable, isDataMetered: status.isDataMetered,
      primaryLink: status.primary,
      connectivity: InternetConnectivity(rawValue: status.connectivity.rawValue) ?? .unknown,
      unknownSources: status.waitingSources.map(\.rawValue),
      expectsConnectivity: status.expectsConnectivity, primarySSID: status.primaryLink?.ssid)
    conditions.isPrimaryRoaming = status.primaryIsRoaming
    conditions.roamingUnknown = status.primaryRoamingUnknown
    return conditions
  }
}

/// The live power probe as the runtime's power source.
public struct MonitoredPower: PowerConditionSource {
  let probe: PowerProbe

  public init(_ probe: PowerProbe) {
    self.probe = probe
  }

  public var current: PowerConditions { Self.conditions(probe.status) }

  /// The probe's own subscription, mapped as its reader takes each status (no task between).
  public func updates() -> some AsyncSequence<PowerConditions, Never> & Sendable {
    probe.statusUpdates().map(Self.conditions)
  }

  static func conditions(_ status: PowerStatus) -> PowerConditions {
    PowerConditions(isCharging: status.charging, isBatteryNotLow: status.isBatteryNotLow)
  }
}
