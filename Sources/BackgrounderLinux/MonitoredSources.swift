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

  public func updates() -> AsyncStream<NetworkConditions> {
    monitor.statusUpdates().mapped(Self.conditions)
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

  public func updates() -> AsyncStream<PowerConditions> {
    probe.statusUpdates().mapped(Self.conditions)
  }

  static func conditions(_ status: PowerStatus) -> PowerConditions {
    PowerConditions(isCharging: status.charging, isBatteryNotLow: status.isBatteryNotLow)
  }
}

extension AsyncStream where Element: Sendable {
  /// A stream of `transform(element)` that ends with this one, and stops reading this one when
  /// its consumer goes away.
  fileprivate func mapped<T: Sendable>(
    _ transform: @escaping @Sendable (Element) -> T
  ) -> AsyncStream<T> {
    AsyncStream<T> { continuation in
      let task = Task {
        for await element in self { continuation.yield(transform(element)) }
        continuation.finish()
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
