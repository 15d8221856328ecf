import Memo
import Netlink

extension ReachabilityModel {
  /// The route the kernel named for a probe destination (`RTM_GETROUTE`, live mode only).
  enum KernelEgress: Sendable, Equatable {
    /// Traffic leaves through `interfaceIndex`; `metric` when the reply carried one.
    case route(interfaceIndex: Int32, table: UInt32, metric: UInt32?)
    /// The kernel has no route (or a blackhole / unreachable / prohibit one).
    case unreachable
  }

  /// The kernel's answers for the probe destinations of both families (`nil`: none yet).
  struct KernelAnswers: Sendable, Equatable {
    var ipv4: KernelEgress?
    var ipv6: KernelEgress?

    /// The answer for `family` (IPv4 or IPv6).
    subscript(family: UInt8) -> KernelEgress? {
      get { family == NetlinkConstant.familyIPv6 ? ipv6 : ipv4 }
      set {
        if family == NetlinkConstant.familyIPv6 { ipv6 = newValue } else { ipv4 = newValue }
      }
    }
  }

  struct Candidate {
    var metric: UInt32
    var family: UInt8
    var interfaceIndex: Int32
  }

  /// The model's own conclusion: reachable, metered, primary and every link's state.
  public func status() -> NetworkStatus { status(kernelEgress: KernelAnswers()) }

  /// ``status(kernelEgress:cache:)`` with nothing kept from an earlier call.
  func status(kernelEgress: KernelAnswers) -> NetworkStatus {
    var cache = StatusCache()
    return status(kernelEgress: kernelEgress, cache: &cache)
  }

  /// The conclusion, with the kernel's answers for the probe destinations where known: a
  /// family's egress is the kernel's when its link is usable, none when the kernel has no
  /// route, and the model's (rules, tables, nexthops) otherwise. What depends only on the
  /// links, addresses, facts and hints is taken from `cache` when those did not change since
  /// it was filled (most changes are a route or the kernel's answer); a status computed from
  /// the same inputs as one of the last two is handed out again.
  func status(kernelEgress: KernelAnswers, cache: inout StatusCache) -> NetworkStatus {
    let linkState = cache.linkState(of: self)
    let inputs = StatusCache.RouteInputs(model: self, kernelEgress: kernelEgress)
    if let known = cache.knownStatus(for: inputs) { return known }
    let status = status(kernelEgress: kernelEgress, linkState: linkState, cache: &cache)
    cache.keep(status, for: inputs)
    return status
  }

  private func status(
    kernelEgress: KernelAnswers, linkState: LinkState, cache: inout StatusCache
  ) -> NetworkStatus {
    let usable = linkState.usable
    var egress: [Candidate] = []
    for family in [NetlinkConstant.familyIPv4, NetlinkConstant.familyIPv6] {
      switch kernelEgress[family] {
      case .unreachable:
        continue
      case .route(let index, let table, let metric)
      where usable.contains(FamilyLink(family: family, index: index)):
        egress.append(
          Candidate(
            metric: metric ?? defaultRouteMetric(table: table, index: index, family: family) ?? 0,
            family: family, interfaceIndex: index))
      default:
        // Without a usable link of the family, no route of it counts.
        guard linkState.usableFamilies.contains(family) else { continue }
        if let choice = modelEgress(family: family, usable: usable) { egress.append(choice) }
      }
    }
    egress.sort(by: Self.isPreferred)
    let defaults = reachableDefaultRoutes(usable: usable)
    let classifications = linkState.classifications
    let uplink = defaults.first { classifications[$0.interfaceIndex]?.type != .tunnel }
      .flatMap { candidate in
        tables.links[candidate.interfaceIndex].map {
          (name: $0.name, metered: classifications[candidate.interfaceIndex]!.isMetered)
        }
      }
    var defaultRouteLinks = defaults.map(\.interfaceIndex)
    defaultRouteLinks.sort()
    let linksKey = StatusCache.LinksKey(
      defaultRouteLinks: defaultRouteLinks, uplink: uplink?.name, uplinkIsMetered: uplink?.metered)
    var links = cache.links(for: linksKey) {
      linkState.sortedLinks.map { link in
        var classification = classifications[link.index]!
        if classification.reason == .tunnelInherits(from: nil), let uplink {
          classification.isMetered = uplink.metered
          classification.reason = .tunnelInherits(from: uplink.name)
        }
        return LinkStatus(
          name: link.name, index: Int(link.index), type: classification.type, isUp: link.isUp,
          hasCarrier: link.hasCarrier, isMetered: classification.isMetered,
          hasDefaultRoute: defaultRouteLinks.contains(link.index),
          meteredReason: classification.reason,
          ssid: classification.type == .wifi ? hints.ssids[link.name] : nil)
      }
    }
    if hints.sources[.networkManager]?.isStale == true {
      for index in links.indices {
        if case .networkManager = links[index].meteredReason { links[index].isStale = true }
      }
    }
    applyModemManagerRoaming(to: &links)
    let primary = egress.first.flatMap { tables.links[$0.interfaceIndex]?.name }
    let primaryLink = links.first { $0.name == primary }
    let (connectivity, source) = hints.connectivity(primary: primary)
    var status = NetworkStatus(
      isReachable: primary != nil, isDataMetered: primaryLink?.isMetered ?? false,
      primary: primary, links: links, malformedMessages: malformedMessages,
      connectivity: connectivity, connectivitySource: source, netlinkOverruns: netlinkOverruns)
    status.sources = hints.sources
    status.expectsConnectivity = hints.expectsConnectivity
    return status
  }

  /// Each link's classification, the links in index order and which links and families are
  /// usable: what depends only on links, addresses, facts, overrides and hints.
  struct LinkState: Sendable {
    var classifications: [Int32: MeteredClassifier.Classification]
    var sortedLinks: [LinkInfo]
    var usable: Set<FamilyLink>
    var usableFamilies: Set<UInt8>
  }

  /// Computes ``LinkState`` afresh.
  func linkState() -> LinkState {
    var classifications = [Int32: MeteredClassifier.Classification](
      minimumCapacity: tables.links.count)
    for (index, link) in tables.links {
      classifications[index] = MeteredClassifier.classify(
        link, facts: facts(forInterface: link.name), overrides: overrides,
        networkManager: hints.networkManagerMetered[link.name] ?? .unknown,
        ssid: hints.ssids[link.name])
    }
    let usable = usableFamilyLinks()
    return LinkState(
      classifications: classifications,
      sortedLinks: tables.links.values.sorted { $0.index < $1.index }, usable: usable,
      usableFamilies: Set(usable.map(\.family)))
  }

  private static func isPreferred(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
    (lhs.metric, lhs.family, lhs.interfaceIndex) < (rhs.metric, rhs.family, rhs.interfaceIndex)
  }

  /// Links that are up, have carrier, are not loopback and have a usable global address of a
  /// family.
  private func usableFamilyLinks() -> Set<FamilyLink> {
    var usable = Set<FamilyLink>()
    for address in tables.addresses.values where isUsable(address) {
      usable.insert(FamilyLink(family: address.family, index: address.interfaceIndex))
    }
    return usable
  }

  /// Whether some link of `family` is usable (see ``usableFamilyLinks()``): without one, no
  /// route of the family counts, whatever the kernel would answer for it.
  func hasUsableLink(family: UInt8) -> Bool {
    tables.addresses.values.contains { $0.family == family && isUsable($0) }
  }

  /// A usable global address on a link that is up, has carrier and is not loopback.
  private func isUsable(_ address: AddressInfo) -> Bool {
    guard address.isUsableGlobal, let link = tables.links[address.interfaceIndex] else {
      return false
    }
    return link.isUp && link.hasCarrier && !link.isLoopback
  }

  /// Usable unicast default routes in the tables the rules of their family look up, best
  /// first: the links that carry a default route, and the underlay tunnels inherit from.
  private func reachableDefaultRoutes(usable: Set<FamilyLink>) -> [Candidate] {
    var candidates: [Candidate] = []
    for family in [NetlinkConstant.familyIPv4, NetlinkConstant.familyIPv6] {
      let lookedUp = lookedUpTables(family: family)
      for route in tables.routes
      where route.family == family && route.tos == 0 && lookedUp.contains(route.table)
        && route.type == NetlinkConstant.routeTypeUnicast && !tables.isBlackhole(route)
      {
        for index in tables.interfaces(of: route)
        where usable.contains(FamilyLink(family: family, index: index)) {
          candidates.append(Candidate(metric: route.metric, family: family, interfaceIndex: index))
        }
      }
    }
    return candidates.sorted(by: Self.isPreferred)
  }

  /// The tables the rules of `family` look up (see ``effectiveRules(family:)``), without
  /// copying the rules.
  private func lookedUpTables(family: UInt8) -> [UInt32] {
    var tableIDs: [UInt32] =
      knowsRules
      ? [] : [NetlinkConstant.tableLocal, NetlinkConstant.tableMain, NetlinkConstant.tableDefault]
    for rule in tables.rules
    where rule.family == family && rule.action == NetlinkConstant.ruleActionTable
      && !tableIDs.contains(rule.table)
    {
      tableIDs.append(rule.table)
    }
    return tableIDs
  }

  private func defaultRouteMetric(table: UInt32, index: Int32, family: UInt8) -> UInt32? {
    var lowest: UInt32?
    for route in tables.routes
    where route.family == family && route.table == table && route.tos == 0
      && tables.interfaces(of: route).contains(index)
    {
      lowest = min(lowest ?? route.metric, route.metric)
    }
    return lowest
  }
}

/// A link usable for one address family.
struct FamilyLink: Hashable, Sendable {
  var family: UInt8
  var index: Int32
}

/// The ``ReachabilityModel/LinkState`` of the last status, with the inputs it was computed
/// from. Comparing those is cheap while they are unchanged: a dictionary that was not written
/// to since still shares its storage, and equal storage is equal at once.
struct StatusCache: Sendable {
  private var links: [Int32: LinkInfo] = [:]
  private var addresses: [NetworkTables.AddressKey: AddressInfo] = [:]
  private var facts: [String: LinkFacts] = [:]
  private var overrides = InterfaceOverrides()
  private var hints = LinkHints()
  private var state: ReachabilityModel.LinkState?
  /// The link lists of the last two statuses (newest first), for the same link state: a change
  /// often goes back and forth between two (a default route added and removed), and handing
  /// out the very same array makes comparing and encoding it cheap.
  private var recentLinks = RecentValues<LinksKey, [LinkStatus]>()
  /// The last two statuses for the same link state, by the rest of their inputs.
  private var recentStatuses = RecentValues<RouteInputs, NetworkStatus>()

  /// What a status depends on besides the link state: the routing objects, the kernel's
  /// answers and the counters. Fields that differ most often between two statuses come first
  /// (compared first); tables that were not written to since still share their storage.
  struct RouteInputs: Sendable, Equatable {
    var kernelEgress: ReachabilityModel.KernelAnswers
    var malformedMessages: Int
    var netlinkOverruns: Int
    var knowsRules: Bool
    var routes: [RouteInfo]
    var rules: [RuleInfo]
    var nexthops: [UInt32: NexthopInfo]
    var probeDestinations: EgressProbeDestinations

    init(model: ReachabilityModel, kernelEgress: ReachabilityModel.KernelAnswers) {
      self.kernelEgress = kernelEgress
      malformedMessages = model.malformedMessages
      netlinkOverruns = model.netlinkOverruns
      knowsRules = model.knowsRules
      routes = model.tables.routes
      rules = model.tables.rules
      nexthops = model.tables.nexthops
      probeDestinations = model.probeDestinations
    }
  }

  /// The status computed before from `inputs` with the current link state, if one of the last
  /// two was.
  func knownStatus(for inputs: RouteInputs) -> NetworkStatus? {
    recentStatuses.value(for: inputs)
  }

  /// Keeps `status`, computed from `inputs` with the current link state.
  mutating func keep(_ status: NetworkStatus, for inputs: RouteInputs) {
    recentStatuses.insert(status, for: inputs)
  }

  /// What a status's link list depends on besides the link state.
  struct LinksKey: Sendable, Equatable {
    /// The links with a usable default route, ascending.
    var defaultRouteLinks: [Int32]
    /// The uplink tunnels inherit from.
    var uplink: String?
    var uplinkIsMetered: Bool?
  }

  /// The link list for `key`: the one handed out before for it, or `build()`'s.
  mutating func links(for key: LinksKey, build: () -> [LinkStatus]) -> [LinkStatus] {
    if let known = recentLinks.value(for: key) { return known }
    let links = build()
    recentLinks.insert(links, for: key)
    return links
  }

  /// `model`'s link state, computed again only when its inputs changed.
  mutating func linkState(of model: ReachabilityModel) -> ReachabilityModel.LinkState {
    if let state, links == model.tables.links, addresses == model.tables.addresses,
      facts == model.linkFacts, overrides == model.overrides, hints == model.hints
    {
      return state
    }
    let fresh = model.linkState()
    recentLinks.removeAll()
    recentStatuses.removeAll()
    links = model.tables.links
    addresses = model.tables.addresses
    facts = model.linkFacts
    overrides = model.overrides
    hints = model.hints
    state = fresh
    return fresh
  }
}
