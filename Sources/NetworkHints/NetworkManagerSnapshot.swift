import Reachability

/// What NetworkManager says at one moment, read over D-Bus.
public struct NetworkManagerSnapshot: Sendable, Equatable {
  /// `Device.Metered` per IP interface name.
  public var metered: [String: NetworkManagerMetered] = [:]
  /// The manager's global `Connectivity`.
  public var connectivity: Connectivity = .unknown
  /// The best of `Device.Ip4Connectivity` / `Ip6Connectivity` per IP interface name.
  public var deviceConnectivity: [String: Connectivity] = [:]

  /// NetworkManager absent: no opinion on anything.
  public static let absent = NetworkManagerSnapshot()

  static let service = "org.freedesktop.NetworkManager"
  static let managerPath = "/org/freedesktop/NetworkManager"
  static let deviceInterface = "org.freedesktop.NetworkManager.Device"

  /// Reads the manager's `Connectivity` and `Devices`, then each device's interface names,
  /// `Metered` and per-family connectivity. A device that vanished meanwhile is skipped.
  static func read(from bus: SystemBus) throws(BusError) -> NetworkManagerSnapshot {
    var snapshot = NetworkManagerSnapshot()
    let manager = try bus.allProperties(
      destination: service, path: managerPath, interface: service)
    if case .uint32(let value)? = manager["Connectivity"] {
      snapshot.connectivity = Connectivity(networkManagerValue: value) ?? .unknown
    }
    guard case .objectPaths(let devices)? = manager["Devices"] else { return snapshot }
    for path in devices {
      guard
        let device = try? bus.allProperties(
          destination: service, path: path, interface: deviceInterface)
      else { continue }
      snapshot.add(device: device)
    }
    return snapshot
  }

  /// Records one device's properties (keyed by `IpInterface`, else `Interface`).
  mutating func add(device: [String: BusValue]) {
    var name: String?
    for key in ["IpInterface", "Interface"] {
      if case .string(let value)? = device[key], !value.isEmpty {
        name = value
        break
      }
    }
    guard let name else { return }
    if case .uint32(let value)? = device["Metered"],
      let parsed = NetworkManagerMetered(networkManagerValue: value), parsed != .unknown
    {
      metered[name] = parsed
    }
    let families = ["Ip4Connectivity", "Ip6Connectivity"].compactMap { key -> Connectivity? in
      guard case .uint32(let value)? = device[key] else { return nil }
      return Connectivity(networkManagerValue: value)
    }
    if let best = families.max(by: { Self.rank($0) < Self.rank($1) }), best != .unknown {
      deviceConnectivity[name] = best
    }
  }

  private static func rank(_ value: Connectivity) -> Int {
    switch value {
    case .unknown: 0
    case .none: 1
    case .portal: 2
    case .limited: 3
    case .full: 4
    }
  }
}
