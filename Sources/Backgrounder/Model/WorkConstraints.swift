/// The network a worker needs.
public enum NetworkRequirement: String, Hashable, Sendable, Codable, CaseIterable {
  /// No network needed.
  case none
  /// Any reachable network.
  case any
  /// A reachable network whose primary link is not metered.
  case unmetered

  /// Whether `conditions` satisfy this requirement. Known-broken connectivity (captive portal,
  /// limited, none) fails `any` and `unmetered`; unknown connectivity trusts the routes.
  public func isSatisfied(by conditions: NetworkConditions) -> Bool {
    switch self {
    case .none: true
    case .any: conditions.isReachable && !conditions.connectivity.blocksNetworkWork
    case .unmetered:
      conditions.isReachable && !conditions.isDataMetered
        && !conditions.connectivity.blocksNetworkWork
    }
  }
}

/// Conditions that must hold before (and while) a worker runs.
public struct WorkConstraints: Hashable, Sendable, Codable {
  /// The network the worker needs.
  public var networkRequired: NetworkRequirement
  /// The device must be on external power.
  public var requiresCharging: Bool
  /// The battery must not be low.
  public var requiresBatteryNotLow: Bool

  /// Creates constraints; the default has none.
  public init(
    networkRequired: NetworkRequirement = .none, requiresCharging: Bool = false,
    requiresBatteryNotLow: Bool = false
  ) {
    self.networkRequired = networkRequired
    self.requiresCharging = requiresCharging
    self.requiresBatteryNotLow = requiresBatteryNotLow
  }

  /// No constraints.
  public static let none = WorkConstraints()

  /// The power predicates that `power` leaves unmet.
  func unmetPower(_ power: PowerConditions) -> [PendingPredicate] {
    var unmet: [PendingPredicate] = []
    if requiresCharging && !power.isCharging { unmet.append(.requiresCharging) }
    if requiresBatteryNotLow && !power.isBatteryNotLow { unmet.append(.requiresBatteryNotLow) }
    return unmet
  }
}
