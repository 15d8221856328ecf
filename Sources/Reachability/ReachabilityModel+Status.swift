import Netlink

extension ReachabilityModel {
  private struct Candidate {
    var metric: UInt32
    var family: UInt8
    var interfaceIndex: Int32
  }

  /// The current conclusion: reachable, metered, primary and every link's state.
  public func status() -> NetworkStatus {
    let candidates = usableDefaultRoutes()
    var classifications: [Int32: MeteredClassifier.Classification] = [:]
    for (index, link) in tables.links {
      classifications[index] = MeteredClassifier.classify(
        link, facts: facts(forInterface: link.name), overrides: overrides,
        networkManager: hints.networkManagerMetered[link.name] ?? .unknown,
        ssid: hints.ssids[link.name])
    }
    let uplink = candidates.first { classifications[$0.interfaceIndex]?.type != .tunnel }
      .flatMap { candidate in
        tables.links[candidate.interfaceIndex].map {
          (name: $0.name, metered: classifications[candidate.interfaceIndex]!.isMetered)
        }
      }
    let defaultRouteLinks = Set(candidates.map(\.interfaceIndex))
    let links = tables.links.values.sorted { $0.index < $1.index }.map { link in
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
    let primary = candidates.first.flatMap { tables.links[$0.interfaceIndex]?.name }
    let primaryLink = links.first { $0.name == primary }
    let (connectivity, source) = hints.connectivity(primary: primary)
    return NetworkStatus(
      isReachable: primary != nil, isDataMetered: primaryLink?.isMetered ?? false,
      primary: primary, links: links, malformedMessages: malformedMessages,
      connectivity: connectivity, connectivitySource: source)
  }

  /// Unicast default routes in the main table whose output link is up, has carrier, is not
  /// loopback, and has a usable global address of the route's family; best first (metric,
  /// then IPv4 before IPv6, then interface index).
  private func usableDefaultRoutes() -> [Candidate] {
    struct FamilyLink: Hashable {
      var family: UInt8
      var index: Int32
    }
    let addressed = Set(
      tables.addresses.values.filter(\.isUsableGlobal).map {
        FamilyLink(family: $0.family, index: $0.interfaceIndex)
      })
    let usableLinks = Set(
      tables.links.values.filter { $0.isUp && $0.hasCarrier && !$0.isLoopback }.map(\.index))
    var candidates: [Candidate] = []
    for route in tables.routes.values
    where route.isDefault && route.table == NetlinkConstant.tableMain
      && route.type == NetlinkConstant.routeTypeUnicast
      && (route.family == NetlinkConstant.familyIPv4 || route.family == NetlinkConstant.familyIPv6)
    {
      for index in route.interfaceIndices
      where usableLinks.contains(index)
        && addressed.contains(FamilyLink(family: route.family, index: index))
      {
        candidates.append(
          Candidate(metric: route.metric, family: route.family, interfaceIndex: index))
      }
    }
    return candidates.sorted {
      ($0.metric, $0.family, $0.interfaceIndex) < ($1.metric, $1.family, $1.interfaceIndex)
    }
  }
}
