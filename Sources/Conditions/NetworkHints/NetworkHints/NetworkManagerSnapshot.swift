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
  /// `Metered` and per-family connectivity (asked together), all before `calls`' deadline (one
  /// limit for the whole read, not one per device), and hands the snapshot to `done`. A device
  /// that vanished meanwhile is skipped; no answer in time is a ``BusError/isTimeout`` failure.
  static func read(
    with calls: BusReadCalls, done: @escaping (Result<NetworkManagerSnapshot, BusError>) -> Void
  ) {
    let finish = calls.once(done)
    calls.allProperties(service, managerPath, service) { answer in
      let manager: [String: BusValue]
      switch answer {
      case .failure(let error): return finish(.failure(error))
      case .success(let properties): manager = properties
      }
      var snapshot = NetworkManagerSnapshot()
      if case .uint32(let value)? = manager["Connectivity"] {
        snapshot.connectivity = Connectivity(networkManagerValue: value) ?? .unknown
      }
      if case .bool(let enabled)? = manager["ConnectivityCheckEnabled"] {
        snapshot.checksConnectivity = enabled
      }
      if case .bool(let startup)? = manager["Startup"] { snapshot.isStartingUp = startup }
      guard case .objectPaths(let devices)? = manager["Devices"], !devices.isEmpty else {
        return finish(.success(snapshot))
      }
      // Answers kept by device, taken in the manager's order once all came.
      var answered: [String: [String: BusValue]] = [:]
      var left = devices.count
      for path in devices {
        calls.allProperties(service, path, deviceInterface) { answer in
          switch answer {
          case .success(let device): answered[path] = device
          case .failure(let error) where error.isTimeout: return finish(.failure(error))
          case .failure: break  // vanished meanwhile
          }
          left -= 1
          guard left == 0 else { return }
          for path in devices { answered[path].map { snapshot.add(device: $0) } }
          finish(.success(snapshot))
        }
      }
    }
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
