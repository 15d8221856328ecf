import DBus
import Reachability

/// What NetworkManager says at one moment, read over D-Bus.
public struct NetworkManagerSnapshot: Sendable, Equatable {
  /// `Device.Metered` per IP interface name.
  public var metered: [String: NetworkManagerMetered] = [:]
  /// The manager's global `Connectivity`.
  public var connectivity: Connectivity = .unknown
  /// The best of `Device.Ip4Connectivity` / `Ip6Connectivity` per IP interface name.
  public var deviceConnectivity: [String: Connectivity] = [:]
  /// The manager's `ConnectivityCheckEnabled`: its `unknown` connectivity then means "not
  /// checked yet".
  public var checksConnectivity = false
  /// The manager's `Startup`: it is still activating its connections (after a restart its
  /// devices are not all back yet).
  public var isStartingUp = false

  /// NetworkManager absent: no opinion on anything.
  public static let absent = NetworkManagerSnapshot()

  static let service = "org.freedesktop.NetworkManager"
  static let managerPath = "/org/freedesktop/NetworkManager"
  static let deviceInterface = "org.freedesktop.NetworkManager.Device"

  /// Reads the manager's `Connectivity` and `Devices`, then each device's interface names,
  /// `Metered` and per-family connectivity, all before `deadline` (monotonic microseconds: one
  /// limit for the whole read, not one per device). A device that vanished meanwhile is
  /// skipped; no answer in time throws a ``BusError/isTimeout`` error.
  static func read(from bus: BusConnection, deadline: UInt64) throws(BusError)
    -> NetworkManagerSnapshot
  {
    var snapshot = NetworkManagerSnapshot()
    let manager = try bus.allProperties(
      destination: service, path: managerPath, interface: service, deadline: deadline)
    if case .uint32(let value)? = manager["Connectivity"] {
      snapshot.connectivity = Connectivity(networkManagerValue: value) ?? .unknown
    }
    if case .bool(let enabled)? = manager["ConnectivityCheckEnabled"] {
      snapshot.checksConnectivity = enabled
    }
    if case .bool(let startup)? = manager["Startup"] { snapshot.isStartingUp = startup }
    guard case .objectPaths(let devices)? = manager["Devices"] else { return snapshot }
    for path in devices {
      let device: [String: BusValue]
      do {
        device = try bus.allProperties(
          destination: service, path: path, interface: deviceInterface, deadline: deadline)
      } catch {
        if error.isTimeout { throw error }
        continue
      }
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
