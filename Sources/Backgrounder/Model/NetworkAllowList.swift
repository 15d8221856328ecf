/// Which networks a task may run on (`ssids`, `interfaces` in the daemon's config): the
/// primary link must be Wi-Fi on a network whose SSID matches one of ``ssids``, and its name
/// must match one of ``interfaces`` (globs, ``GlobPattern``). An empty list allows any.
///
/// Unknown is not permission: while the network conditions are not known
/// (``NetworkConditions/isKnown``), or there is no primary link, a list that is not empty is
/// unmet.
public struct NetworkAllowList: Hashable, Sendable, Codable {
  /// SSID globs; empty: any network, Wi-Fi or not.
  public var ssids: [String]
  /// Interface-name globs of the primary link; empty: any interface.
  public var interfaces: [String]

  /// Creates an allow-list; the default allows every network.
  public init(ssids: [String] = [], interfaces: [String] = []) {
    self.ssids = ssids
    self.interfaces = interfaces
  }

  /// Allows every network.
  public static let any = NetworkAllowList()

  /// Whether both lists are empty.
  public var isEmpty: Bool { ssids.isEmpty && interfaces.isEmpty }

  /// The first list `conditions` fail, as the predicate a task waits on; `nil` when both are
  /// met. The predicate names what is there now (the SSID, the primary link).
  public func unmet(by conditions: NetworkConditions) -> PendingPredicate? {
    let known = conditions.isKnown
    if !ssids.isEmpty {
      let ssid = known ? conditions.primarySSID : nil
      if !(ssid.map { name in ssids.contains { GlobPattern($0).matches(name) } } ?? false) {
        return .wifiNetwork(allowed: ssids, current: ssid)
      }
    }
    if !interfaces.isEmpty {
      let link = known ? conditions.primaryLink : nil
      if !(link.map { name in interfaces.contains { GlobPattern($0).matches(name) } } ?? false) {
        return .networkInterface(allowed: interfaces, current: link)
      }
    }
    return nil
  }
}

/// Everything a task needs of the network: its ``NetworkRequirement`` and its
/// ``NetworkAllowList``. The dispatcher's gate, its blocks and its stops go by this.
struct NetworkNeed: Hashable, Sendable {
  var requirement: NetworkRequirement
  var allowList: NetworkAllowList
  /// A spent metered budget: a metered primary link fails the need too.
  var meteredBudgetSpent: MeteredBudgetWait? = nil

  /// Nothing is needed of the network.
  var isNone: Bool { requirement == .none && allowList.isEmpty }

  /// The requirement and the allow-list are met (and, with a spent budget, the link is not
  /// metered).
  func isSatisfied(by conditions: NetworkConditions) -> Bool {
    requirement.isSatisfied(by: conditions) && allowList.unmet(by: conditions) == nil
      && (meteredBudgetSpent == nil || NetworkRequirement.unmetered.isSatisfied(by: conditions))
  }

  /// Why a run must stop under `conditions` (known, and failing the requirement or the
  /// allow-list), or `nil`.
  func lossReason(under conditions: NetworkConditions) -> StopReason? {
    if let reason = requirement.lossReason(under: conditions) { return reason }
    if meteredBudgetSpent != nil, requirement != .none,
      let reason = NetworkRequirement.unmetered.lossReason(under: conditions)
    {
      return reason
    }
    guard conditions.isKnown, allowList.unmet(by: conditions) != nil else { return nil }
    return .networkNotAllowed
  }
}

extension WorkConstraints {
  /// The network requirement and allow-list together.
  var networkNeed: NetworkNeed {
    NetworkNeed(requirement: networkRequired, allowList: allowedNetworks)
  }
}
