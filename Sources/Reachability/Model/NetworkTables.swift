import Netlink

/// What decides the answer, keyed the way the kernel tells objects apart: links, addresses
/// (IPv4 ones, which decide what the kernel removes with them, and global IPv6 ones),
/// default routes of every table, policy rules and nexthop objects. Routes to specific prefixes
/// never get here, so the size does not grow with the FIB.
struct NetworkTables: Sendable, Equatable {
  /// An address is identified by family, interface, prefix length and the address itself.
  struct AddressKey: Hashable, Sendable {
    var family: UInt8
    var interfaceIndex: Int32
    var prefixLength: UInt8
    var address: [UInt8]
  }

  /// A default route is identified by family, table, metric, first output interface and
  /// nexthop object, so equal-metric routes on different links stay distinct (unlike libnl's
  /// route cache).
  struct RouteKey: Hashable, Sendable {
    var family: UInt8
    var table: UInt32
    var metric: UInt32
    var firstInterface: Int32
    var nexthopID: UInt32?
  }

  var links: [Int32: LinkInfo] = [:]
  var addresses: [AddressKey: AddressInfo] = [:]
  var routes: [RouteKey: RouteInfo] = [:]
  /// In kernel order: by priority, a new rule after the ones of equal priority.
  var rules: [RuleInfo] = []
  var nexthops: [UInt32: NexthopInfo] = [:]

  /// Applies one event (or one dumped object). Returns whether anything changed.
  @discardableResult
  mutating func apply(_ payload: RtnetlinkMessage.Payload) -> Bool {
    switch payload {
    case .link(let link, .new):
      guard links[link.index] != link else { return false }
      links[link.index] = link
    case .link(let link, .delete):
      links[link.index] = nil
      removeObjects(ofLink: link.index)
    case .address(let address, _)
    where address.family == NetlinkConstant.familyIPv6
      && address.scope != NetlinkConstant.scopeUniverse:
      return false  // never usable (the kernel's filter drops their notifications too)
    case .address(let address, .new):
      guard addresses.updateValue(address, forKey: Self.key(address)) != address else {
        return false
      }
    case .address(let address, .delete):
      return addresses.removeValue(forKey: Self.key(address)) != nil
    case .route(let route, .new) where route.isDefault:
      return routes.updateValue(route, forKey: Self.key(route)) != route
    case .route(let route, .delete) where route.isDefault:
      return routes.removeValue(forKey: Self.key(route)) != nil
    case .rule(let rule, .new):
      guard !rules.contains(rule) else { return false }
      rules.insert(rule, at: rules.firstIndex { $0.priority > rule.priority } ?? rules.endIndex)
    case .rule(let rule, .delete):
      guard let index = rules.firstIndex(of: rule) else { return false }
      rules.remove(at: index)
    case .nexthop(let nexthop, .new):
      return nexthops.updateValue(nexthop, forKey: nexthop.id) != nexthop
    case .nexthop(let nexthop, .delete):
      guard nexthops.removeValue(forKey: nexthop.id) != nil else { return false }
      removeNexthops([nexthop.id])
    default:
      return false
    }
    return true
  }

  /// Takes the `kind` part from `dump`, keeping the other parts.
  mutating func replace(_ kind: ObjectKind, from dump: NetworkTables) {
    switch kind {
    case .link:
      links = dump.links
      let gone = Set(addresses.values.map(\.interfaceIndex)).union(
        routes.values.flatMap(\.interfaceIndices)
      ).subtracting(links.keys)
      for index in gone { removeObjects(ofLink: index) }
    case .address: addresses = dump.addresses
    case .route: routes = dump.routes
    case .rule: rules = dump.rules
    case .nexthop: nexthops = dump.nexthops
    }
  }

  /// Whether the link `index` has no IPv4 address left.
  func hasNoIPv4Address(_ index: Int32) -> Bool {
    !addresses.values.contains {
      $0.family == NetlinkConstant.familyIPv4 && $0.interfaceIndex == index
    }
  }

  /// The output interfaces of `route`: its nexthop object's (or group members'), else its own.
  func interfaces(of route: RouteInfo) -> [Int32] {
    guard let id = route.nexthopID, let nexthop = nexthops[id] else {
      return route.interfaceIndices
    }
    if nexthop.group.isEmpty { return nexthop.interfaceIndex > 0 ? [nexthop.interfaceIndex] : [] }
    return nexthop.group.compactMap { nexthops[$0]?.interfaceIndex }.filter { $0 > 0 }
  }

  /// Whether `route` ends in a blackhole nexthop object.
  func isBlackhole(_ route: RouteInfo) -> Bool {
    route.nexthopID.flatMap { nexthops[$0] }?.isBlackhole ?? false
  }

  /// What the kernel does without telling when a link is set down (`IFF_UP` cleared): it
  /// removes the nexthop objects on the link and the routes whose every hop used it.
  mutating func linkWentDown(_ index: Int32) {
    removeNexthops(Set(nexthops.values.filter { $0.interfaceIndex == index }.map(\.id)))
    routes = routes.filter { route in
      let hops = interfaces(of: route.value)
      return hops.isEmpty || hops.contains { $0 != index }
    }
  }

  /// What the kernel does without telling when an IPv4 address goes: it removes the routes
  /// preferring it as source and, when it was the link's last IPv4 address, every IPv4 route
  /// whose hops all use the link. (IPv6 routes do not depend on addresses this way.)
  mutating func ipv4AddressRemoved(_ address: AddressInfo, lastOfLink: Bool) {
    let index = address.interfaceIndex
    routes = routes.filter { route in
      guard route.value.family == NetlinkConstant.familyIPv4 else { return true }
      if route.value.preferredSource == address.address { return false }
      let hops = interfaces(of: route.value)
      return !(lastOfLink && !hops.isEmpty && hops.allSatisfy { $0 == index })
    }
  }

  private mutating func removeNexthops(_ ids: Set<UInt32>) {
    guard !ids.isEmpty else { return }
    for id in ids { nexthops[id] = nil }
    for (id, var nexthop) in nexthops where !nexthop.group.isEmpty {
      nexthop.group.removeAll { ids.contains($0) }
      nexthops[id] = nexthop
    }
    routes = routes.filter { route in route.value.nexthopID.map { !ids.contains($0) } ?? true }
  }

  private mutating func removeObjects(ofLink index: Int32) {
    addresses = addresses.filter { $0.value.interfaceIndex != index }
    removeNexthops(Set(nexthops.values.filter { $0.interfaceIndex == index }.map(\.id)))
    routes = routes.filter { route in
      route.value.interfaceIndices.isEmpty || route.value.interfaceIndices.contains { $0 != index }
    }
  }

  static func key(_ address: AddressInfo) -> AddressKey {
    AddressKey(
      family: address.family, interfaceIndex: address.interfaceIndex,
      prefixLength: address.prefixLength, address: address.address)
  }

  static func key(_ route: RouteInfo) -> RouteKey {
    RouteKey(
      family: route.family, table: route.table, metric: route.metric,
      firstInterface: route.interfaceIndices.first ?? 0, nexthopID: route.nexthopID)
  }
}
