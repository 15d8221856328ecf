/// The network a worker needs.
public enum NetworkRequirement: String, Hashable, Sendable, Codable, CaseIterable {
  /// No network needed.
  case none
  /// Any reachable network.
  case any
  /// A reachable network whose primary link is not metered.
  case unmetered
  /// A reachable network whose primary link is not roaming (WorkManager's `NOT_ROAMING`):
  /// config value `not-roaming`. A cellular primary link whose roaming is not known fails it
  /// (``NetworkConditions/roamingUnknown``).
  case notRoaming = "not-roaming"

  /// Whether `conditions` satisfy this requirement. Unknown is not permission: conditions that
  /// are not all known (``NetworkConditions/isKnown``) meet neither `any` nor `unmetered`.
  /// Known-broken connectivity (captive portal, limited, none) fails both; unknown
  /// connectivity trusts the routes only when no connectivity source is expected.
  public func isSatisfied(by conditions: NetworkConditions) -> Bool {
    switch self {
    case .none: true
    case .any:
      conditions.isKnown && conditions.isReachable && !conditions.connectivity.blocksNetworkWork
    case .unmetered:
      conditions.isKnown && conditions.isReachable && !conditions.isDataMetered
        && !conditions.connectivity.blocksNetworkWork
    case .notRoaming:
      NetworkRequirement.any.isSatisfied(by: conditions) && conditions.isKnownNotRoaming
    }
  }

  /// Why a run with this requirement must stop under `conditions` (they fail it and are
  /// known), or `nil`: a run is not stopped only because a condition became unknown.
  public func lossReason(under conditions: NetworkConditions) -> StopReason? {
    guard self != .none, conditions.isKnown, !isSatisfied(by: conditions) else { return nil }
    if !conditions.isReachable { return .networkLost }
    if self == .notRoaming, NetworkRequirement.any.isSatisfied(by: conditions) {
      // Roaming that became unknown stops nothing; roaming that is known does.
      return conditions.isPrimaryRoaming ? .roaming : nil
    }
    switch conditions.connectivity {
    case .none: return .networkLost
    case .portal: return .captivePortal
    case .limited: return .limitedConnectivity
    case .unknown, .full: return conditions.isDataMetered ? .networkMetered : .networkLost
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
  /// Windows a run must start in, read in the runtime's time zone (none: any time). A due
  /// run of any kind — calendar, interval, one-time, a retry — waits for the next opening.
  public var windows: [TimeWindow]
  /// What happens to a run still going when its window closes.
  public var windowEnd: WindowEnd
  /// The networks the worker may run on (SSIDs, interfaces); the default allows any.
  public var allowedNetworks: NetworkAllowList
  /// A path that must be a mount point (a backup disk, a network share), or `nil`.
  public var requiredMount: String?
  /// A destination (`host:port`, ``Destination``) a TCP connect must reach, or `nil`.
  public var requiredReachable: String?
  /// Metered bytes the worker may use in a window although ``networkRequired`` forbids metered
  /// links (`unmetered`): while the budget is not spent a metered link satisfies it; once
  /// spent the worker waits for an unmetered link (``MeteredBudget``). `nil`: no budget.
  public var meteredBudget: MeteredBudget?
  /// The egress cap of each run (``WorkContext/bandwidth``): the daemon shapes its command runs
  /// to it; work in the process paces itself.
  public var bandwidth: BandwidthCap?
  /// What happens to a run still going when one of these conditions is lost.
  public var onConditionLost: ConditionLossPolicy = .stop
  /// What these constraints relax to once a due task has waited long enough (`nil`: never).
  public var relaxation: ConstraintRelaxation?
  /// How long the user must have been idle (logind's idle hint) before a run starts, or `nil`.
  public var requiresIdle: Duration?
  /// What happens to a run still going when the user comes back (``requiresIdle``).
  public var onUserReturn: UserReturnPolicy = .continue

  /// Creates constraints; the default has none.
  public init(
    networkRequired: NetworkRequirement = .none, requiresCharging: Bool = false,
    requiresBatteryNotLow: Bool = false, windows: [TimeWindow] = [],
    windowEnd: WindowEnd = .continue, allowedNetworks: NetworkAllowList = .any,
    requiredMount: String? = nil, requiredReachable: String? = nil,
    meteredBudget: MeteredBudget? = nil,
    relaxation: ConstraintRelaxation? = nil, requiresIdle: Duration? = nil,
    onUserReturn: UserReturnPolicy = .continue, bandwidth: BandwidthCap? = nil
  ) {
    self.networkRequired = networkRequired
    self.requiresCharging = requiresCharging
    self.requiresBatteryNotLow = requiresBatteryNotLow
    self.windows = windows
    self.windowEnd = windowEnd
    self.allowedNetworks = allowedNetworks
    self.requiredMount = requiredMount
    self.requiredReachable = requiredReachable
    self.meteredBudget = meteredBudget
    self.relaxation = relaxation
    self.requiresIdle = requiresIdle
    self.onUserReturn = onUserReturn
    self.bandwidth = bandwidth
  }

  private enum CodingKeys: String, CodingKey {
    case networkRequired, requiresCharging, requiresBatteryNotLow, windows, windowEnd
    case allowedNetworks, requiredMount, requiredReachable, meteredBudget, onConditionLost
    case relaxation, requiresIdle, onUserReturn, bandwidth
  }

  /// Decodes what the synthesized encoder writes; the fields added later may be missing.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    networkRequired = try container.decode(NetworkRequirement.self, forKey: .networkRequired)
    requiresCharging = try container.decode(Bool.self, forKey: .requiresCharging)
    requiresBatteryNotLow = try container.decode(Bool.self, forKey: .requiresBatteryNotLow)
    windows = try container.decodeIfPresent([TimeWindow].self, forKey: .windows) ?? []
    windowEnd = try container.decodeIfPresent(WindowEnd.self, forKey: .windowEnd) ?? .continue
    allowedNetworks =
      try container.decodeIfPresent(NetworkAllowList.self, forKey: .allowedNetworks) ?? .any
    requiredMount = try container.decodeIfPresent(String.self, forKey: .requiredMount)
    requiredReachable = try container.decodeIfPresent(String.self, forKey: .requiredReachable)
    meteredBudget = try container.decodeIfPresent(MeteredBudget.self, forKey: .meteredBudget)
    onConditionLost =
      try container.decodeIfPresent(ConditionLossPolicy.self, forKey: .onConditionLost) ?? .stop
    relaxation = try container.decodeIfPresent(ConstraintRelaxation.self, forKey: .relaxation)
    requiresIdle = try container.decodeIfPresent(Duration.self, forKey: .requiresIdle)
    onUserReturn =
      try container.decodeIfPresent(UserReturnPolicy.self, forKey: .onUserReturn) ?? .continue
    bandwidth = try container.decodeIfPresent(BandwidthCap.self, forKey: .bandwidth)
  }

  /// No constraints.
  public static let none = WorkConstraints()

  /// The power predicates that `power` leaves unmet (all of them while it is not known).
  func unmetPower(_ power: PowerConditions) -> [PendingPredicate] {
    var unmet: [PendingPredicate] = []
    if requiresCharging && !(power.isKnown && power.isCharging) {
      unmet.append(.requiresCharging)
    }
    if requiresBatteryNotLow && !(power.isKnown && power.isBatteryNotLow) {
      unmet.append(.requiresBatteryNotLow)
    }
    return unmet
  }
}
