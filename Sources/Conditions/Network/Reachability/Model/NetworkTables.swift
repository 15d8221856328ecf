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

  /// The kernel's identity of a default route: the fields `NLM_F_REPLACE` / `NLM_F_EXCL` /
  /// `NLM_F_APPEND` compare. IPv4 (`fib_table_insert`): table, TOS and priority; several
  /// routes ("aliases") may share it, kept in the kernel's order. IPv6 (`fib6_add_rt2node`):
  /// table and metric; routes with a gateway and the same metric are equal-cost siblings, one
  /// entry here with all their hops (the kernel's notifications describe the whole group).
  struct RouteIdentity: Hashable, Sendable {
    var family: UInt8
    var table: UInt32
    var tos: UInt8
    var metric: UInt32
  }

  var links: [Int32: LinkInfo] = [:]
  var addresses: [AddressKey: AddressInfo] = [:]
  /// Default routes, in the kernel's order among those of one identity.
  var routes: [RouteInfo] = []
  /// In kernel order: by priority, a new rule after the ones of equal priority.
  var rules: [RuleInfo] = []
  var nexthops: [UInt32: NexthopInfo] = [:]
  /// For each IPv6 default route that takes no siblings, the hops of its metric's group that
  /// the kernel keeps after it (none: after the whole group, or no group). The kernel does not
  /// keep a group's siblings together: a new sibling goes after every route of its metric, so
  /// a route added before it sits between siblings, where the kernel's walks jump from the
  /// group's first route to its last (`fib6_dump_node`, `fib6_clean_node`) and never visit it.
  /// Such a route survives its link's going down (``linkWentDown(_:)``). The kernel oracle
  /// found it: a router's route between siblings stayed in the kernel's lookups after its
  /// link went down and up, gone from the model.
  private var hopsAfter: [RouteKey: [Hop]] = [:]

  /// Applies one event (or one dumped object; `flags` are the message's `NLM_F_*`). Returns
  /// whether anything changed.
  @discardableResult
  mutating func apply(_ payload: RtnetlinkMessage.Payload, flags: UInt16 = 0) -> Bool {
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
      return addRoute(route, flags: flags)
    case .route(let route, .delete) where route.isDefault:
      return deleteRoute(route)
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
        routes.flatMap(\.interfaceIndices)
      ).subtracting(links.keys)
      for index in gone { removeObjects(ofLink: index) }
    case .address: addresses = dump.addresses
    case .route:
      // A dump skips the routes between siblings, and says nothing of the order: what is
      // known of them goes with the routes the dump replaces.
      routes = dump.routes
      hopsAfter = [:]
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
    return interfaces(of: nexthop)
  }

  /// The output interfaces of `nexthop`: its own, or its group members' (as known here).
  func interfaces(of nexthop: NexthopInfo) -> [Int32] {
    if nexthop.group.isEmpty { return nexthop.interfaceIndex > 0 ? [nexthop.interfaceIndex] : [] }
    return nexthop.group.compactMap { nexthops[$0]?.interfaceIndex }.filter { $0 > 0 }
  }

  /// Whether `route` ends in a blackhole nexthop object.
  func isBlackhole(_ route: RouteInfo) -> Bool {
    route.nexthopID.flatMap { nexthops[$0] }?.isBlackhole ?? false
  }

  /// What the kernel does without telling when a link is set down (`IFF_UP` cleared): it
  /// removes the nexthop objects on the link and the routes whose every hop used it, but not
  /// an IPv6 route between the siblings of a group that keeps a hop on another link: its walk
  /// (`fib6_clean_node`) jumps from such a group's first route to its last
  /// (`fib6_ifdown` returns -2), past the routes between them. A group with every hop on the
  /// link is flushed, and then the walk visits every route.
  mutating func linkWentDown(_ index: Int32) {
    removeNexthops(Set(nexthops.values.filter { $0.interfaceIndex == index }.map(\.id)))
    let skipped = routesBetweenSiblings(sparedBy: index)
    routes = routes.filter { route in
      let hops = interfaces(of: route)
      return hops.isEmpty || hops.contains { $0 != index } || skipped.contains(Self.key(route))
    }
  }

  /// The IPv6 routes that the kernel's walk skips when `index` goes down: between two hops of
  /// a group with a hop on another link.
  private func routesBetweenSiblings(sparedBy index: Int32) -> Set<RouteKey> {
    guard !hopsAfter.isEmpty else { return [] }
    var skipped = Set<RouteKey>()
    for group in routes where Self.takesSiblings(group) {
      let hops = Self.hops(of: group)
      guard hops.count > 1, hops.contains(where: { $0.index != index }) else { continue }
      let identity = Self.identity(group)
      for route in routes where Self.identity(route) == identity && !Self.takesSiblings(route) {
        let key = Self.key(route)
        if let after = hopsAfter[key], !after.isEmpty, after.count < hops.count {
          skipped.insert(key)
        }
      }
    }
    return skipped
  }

  /// What the kernel does without telling when a link that is up loses carrier (a
  /// `NETDEV_CHANGE` leaving it neither `IFF_RUNNING` nor `IFF_LOWER_UP`: `nh_netdev_event`):
  /// it removes the link's nexthop objects but blackholes, and the routes using them. (Plain
  /// routes stay; they only stop counting while the carrier is gone.) The kernel oracle found
  /// it: a default route through a nexthop object on the link was gone from the kernel's table
  /// and not from ours.
  mutating func linkLostCarrier(_ index: Int32) {
    removeNexthops(
      Set(nexthops.values.filter { $0.interfaceIndex == index && !$0.isBlackhole }.map(\.id)))
  }

  /// What the kernel does without telling when an IPv4 address goes: it removes the routes
  /// preferring it as source and, when it was the link's last IPv4 address, every IPv4 route
  /// with hops of its own that all use the link (`fib_disable_ip` → `fib_sync_down_dev`, which
  /// walks only routes' own hops). A route through a nexthop object stays, and so does the
  /// object: the kernel oracle found it (dual-stack seed 468007242), the model had dropped
  /// such a route and then took the kernel's answer through it for metric 0. (IPv6 routes do
  /// not depend on addresses this way.)
  mutating func ipv4AddressRemoved(_ address: AddressInfo, lastOfLink: Bool) {
    let index = address.interfaceIndex
    routes = routes.filter { route in
      guard route.family == NetlinkConstant.familyIPv4 else { return true }
      if route.preferredSource == address.address { return false }
      guard lastOfLink, route.nexthopID == nil else { return true }
      let hops = route.interfaceIndices
      return hops.isEmpty || hops.contains { $0 != index }
    }
  }

  /// Removes the nexthop objects `ids`, them from their groups, a group left without members
  /// (as `remove_nh_grp_entry` does), and every route using a removed one.
  private mutating func removeNexthops(_ ids: Set<UInt32>) {
    guard !ids.isEmpty else { return }
    var removed = ids
    var pending = ids
    while !pending.isEmpty {
      for id in pending { nexthops[id] = nil }
      var emptied = Set<UInt32>()
      for (id, var nexthop) in nexthops where !nexthop.group.isEmpty {
        nexthop.group.removeAll { pending.contains($0) }
        if nexthop.group.isEmpty { emptied.insert(id) } else { nexthops[id] = nexthop }
      }
      removed.formUnion(emptied)
      pending = emptied
    }
    routes = routes.filter { route in route.nexthopID.map { !removed.contains($0) } ?? true }
  }

  private mutating func removeObjects(ofLink index: Int32) {
    addresses = addresses.filter { $0.value.interfaceIndex != index }
    removeNexthops(Set(nexthops.values.filter { $0.interfaceIndex == index }.map(\.id)))
    routes = routes.filter { route in
      route.interfaceIndices.isEmpty || route.interfaceIndices.contains { $0 != index }
    }
  }

  static func key(_ address: AddressInfo) -> AddressKey {
    AddressKey(
      family: address.family, interfaceIndex: address.interfaceIndex,
      prefixLength: address.prefixLength, address: address.address)
  }

  /// A route among those of its identity, as a deletion names it: its nexthop object, or its
  /// hops and gateway.
  private struct RouteKey: Hashable {
    var identity: RouteIdentity
    var nexthopID: UInt32?
    var interfaceIndices: [Int32]
    var gateway: [UInt8]
  }

  private static func key(_ route: RouteInfo) -> RouteKey {
    RouteKey(
      identity: identity(route), nexthopID: route.nexthopID,
      interfaceIndices: route.interfaceIndices, gateway: route.gateway)
  }

  static func identity(_ route: RouteInfo) -> RouteIdentity {
    RouteIdentity(
      family: route.family, table: route.table,
      tos: route.family == NetlinkConstant.familyIPv4 ? route.tos : 0, metric: route.metric)
  }

  /// An IPv6 route that takes equal-cost siblings (`rt6_qualify_for_ecmp`): it has a gateway,
  /// is not a nexthop object's and not one the kernel learnt from a router advertisement
  /// (`RTF_ADDRCONF`). No attribute says `RTF_ADDRCONF`: the kernel's own are `proto ra` and
  /// expire; the same `proto ra` added from user space without an expiry (NetworkManager
  /// handles advertisements itself) does take siblings. The kernel oracle found it: the model
  /// kept such a sibling as a route of its own. A deletion carries no expiry, so one of the
  /// kernel's own looks like a sibling then: it can only take a hop with its gateway, which no
  /// group has. (A user-space `proto ra` route with an expiry, as networkd adds, is taken for
  /// the kernel's: see NetworkRules.md.)
  private static func takesSiblings(_ route: RouteInfo) -> Bool {
    route.family == NetlinkConstant.familyIPv6 && route.hasGateway && route.nexthopID == nil
      && !isLearntFromARouter(route)
  }

  /// A route the kernel learnt from a router advertisement, as a new route's notification
  /// tells: `proto ra` and an expiry.
  private static func isLearntFromARouter(_ route: RouteInfo) -> Bool {
    route.family == NetlinkConstant.familyIPv6 && route.routingProtocol == routingProtocolRA
      && route.expires
  }

  /// `RTPROT_RA`.
  private static let routingProtocolRA: UInt8 = 9

  /// `RTM_NEWROUTE` of a default route, placed as the kernel placed it (see
  /// ``RouteIdentity``): `NLM_F_REPLACE` replaced the first route of the identity (IPv6: of
  /// the same kind, with its siblings); otherwise an IPv6 sibling's notification names the
  /// whole group, which replaces the group's entry; a route the model has already (the kernel
  /// refuses duplicates, so this is an update, e.g. after a nexthop object was replaced) is
  /// updated in place; else IPv4 `NLM_F_APPEND` went after the routes of the identity and
  /// `NLM_F_CREATE` before them, IPv6 after those of equal metric. A dump's routes come in
  /// the kernel's order. Messages without any of these flags (hand-made captures) keep the
  /// order of their first interface index among routes of one identity.
  private mutating func addRoute(_ route: RouteInfo, flags: UInt16) -> Bool {
    let identity = Self.identity(route)
    let same = routes.indices.filter { Self.identity(routes[$0]) == identity }
    if flags & NetlinkConstant.flagMulti != 0 || same.isEmpty {
      // (A dump lists no route twice; a stray reply repeating one changes nothing.)
      guard !same.contains(where: { routes[$0] == route }) else { return false }
      routes.append(route)
      hopsAfter[Self.key(route)] = nil
      return true
    }
    let before = route.family == NetlinkConstant.familyIPv6 ? routes : []
    defer { followOrder(of: route, flags: flags, before: before) }
    let isIPv6 = route.family == NetlinkConstant.familyIPv6
    let target: Int?
    var addsSiblings = false
    if flags & NetlinkConstant.flagReplace != 0, route.nexthopID != nil,
      let user = same.first(where: { routes[$0].nexthopID == route.nexthopID })
    {
      // The kernel's update of the routes using a replaced nexthop object (sent with
      // `NLM_F_REPLACE`), or a replace changing nothing.
      target = user
    } else if flags & NetlinkConstant.flagReplace != 0, Self.isLearntFromARouter(route),
      let own = same.first(where: { Self.sameRoute(routes[$0], route) })
    {
      // A router's new preference: the kernel updates its route in place and says so with
      // `NLM_F_REPLACE` (kernel oracle, IPv6 seed 1: it was taken for a replace of the first
      // route of its metric, another router's).
      target = own
    } else if flags & NetlinkConstant.flagReplace != 0 {
      target =
        isIPv6
        ? same.first { Self.takesSiblings(routes[$0]) == Self.takesSiblings(route) } ?? same[0]
        : same[0]
    } else if Self.takesSiblings(route),
      let group = same.first(where: { Self.takesSiblings(routes[$0]) })
    {
      target = group  // an added sibling: the notification lists the whole group
      addsSiblings = true
    } else {
      target = same.first { Self.sameRoute(routes[$0], route) }
    }
    if let target {
      var route = route
      if addsSiblings { route = Self.kernelOrder(of: route, after: routes[target]) }
      guard routes[target] != route else { return false }
      routes[target] = route
      return true
    }
    let position: Int
    if flags & NetlinkConstant.flagAppend != 0
      || (isIPv6 && flags & NetlinkConstant.flagCreate != 0)
    {
      position = same.last! + 1
    } else if flags & NetlinkConstant.flagCreate != 0 {
      position = same[0]
    } else {
      let first = route.interfaceIndices.first ?? 0
      position = same.first { (routes[$0].interfaceIndices.first ?? 0) > first } ?? same.last! + 1
    }
    routes.insert(route, at: position)
    return true
  }

  /// Keeps ``hopsAfter`` as the kernel's order is after `route` (an `RTM_NEWROUTE` with
  /// `flags`, applied to `before`): a route that takes no siblings goes after the group (or, a
  /// replace, takes the place of the one it replaced); hops that join a group go after every
  /// route of their metric; a group replaced by a multipath route keeps its place for the
  /// first hop, and the kernel adds the others after every route of the metric
  /// (`ip6_route_multipath_add`).
  private mutating func followOrder(of route: RouteInfo, flags: UInt16, before: [RouteInfo]) {
    guard route.family == NetlinkConstant.familyIPv6 else { return }
    let identity = Self.identity(route)
    let others = routes.filter { Self.identity($0) == identity && !Self.takesSiblings($0) }
    let oldGroup = before.first { Self.identity($0) == identity && Self.takesSiblings($0) }
    let group = routes.first { Self.identity($0) == identity && Self.takesSiblings($0) }
    let replace = flags & NetlinkConstant.flagReplace != 0
    guard let group else {
      for other in others { hopsAfter[Self.key(other)] = nil }
      return
    }
    guard Self.takesSiblings(route) else {
      let key = Self.key(route)
      guard !before.contains(where: { Self.key($0) == key }) else { return }  // in place
      // A replace took the place of the route it replaced; an addition went last.
      let replaced = before.first { Self.identity($0) == identity && !routes.contains($0) }
      hopsAfter[key] =
        replace ? replaced.flatMap { hopsAfter.removeValue(forKey: Self.key($0)) } : nil
      return
    }
    let hops = Self.hops(of: group)
    let old = oldGroup.map(Self.hops(of:)) ?? []
    let groupPosition = routes.firstIndex(of: group) ?? 0
    for other in others {
      let key = Self.key(other)
      let after = hopsAfter[key] ?? []
      if oldGroup == nil {
        // A new group goes after every route of its metric; one that replaced a route of the
        // other kind (the kernel's fallback when none of its kind is there) takes its place.
        let isAfterGroup = replace && (routes.firstIndex(of: other) ?? 0) > groupPosition
        hopsAfter[key] = isAfterGroup ? nil : hops
      } else if replace, oldGroup != group {
        // Before the whole old group: before the new one too; else only its first hop is.
        hopsAfter[key] =
          !after.isEmpty && after.count == old.count ? hops : Array(hops.dropFirst())
      } else if hops.count > old.count {
        hopsAfter[key] = after + hops.suffix(hops.count - old.count)
      }
      if hopsAfter[key]?.isEmpty == true { hopsAfter[key] = nil }
    }
  }

  /// The hops of a group that siblings joined, in the kernel's order. The kernel puts a new
  /// sibling at the end of the group (a dump lists it last), but the notification of the
  /// append starts with the new hops and then lists the group's others: `ip -6 route append`
  /// of `sa0` to a group `[sb0]` notifies `[sa0, sb0]` while `ip -6 route show` lists
  /// `sb0, sa0`. The kernel oracle's fresh reads found it (IPv6 seed 36547641): the model
  /// kept the notification's order and ranked another hop of the group first.
  private static func kernelOrder(of notified: RouteInfo, after group: RouteInfo) -> RouteInfo {
    let new = hops(of: notified)
    let old = hops(of: group)
    guard new.count > old.count,
      zip(new.suffix(old.count), old).allSatisfy({ $0.matches($1) })
    else { return notified }
    var route = notified
    let ordered = old + new.prefix(new.count - old.count)
    route.interfaceIndices = ordered.map(\.index)
    if !route.hopGateways.isEmpty { route.hopGateways = ordered.map(\.gateway) }
    return route
  }

  /// One hop of a route: its interface and gateway (empty when the message did not say).
  private struct Hop: Hashable {
    var index: Int32
    var gateway: [UInt8]

    /// The same interface, and the same gateway where both are known.
    func matches(_ other: Hop) -> Bool {
      index == other.index
        && (gateway.isEmpty || other.gateway.isEmpty || gateway == other.gateway)
    }
  }

  /// A route's hops: a group's from its multipath hops, else its one interface and gateway.
  private static func hops(of route: RouteInfo) -> [Hop] {
    if route.hopGateways.count == route.interfaceIndices.count {
      return zip(route.interfaceIndices, route.hopGateways).map { Hop(index: $0, gateway: $1) }
    }
    let gateway = route.interfaceIndices.count == 1 ? route.gateway : []
    return route.interfaceIndices.map { Hop(index: $0, gateway: gateway) }
  }

  /// `RTM_DELROUTE` of a default route: the notification describes the route removed (IPv6:
  /// one sibling, or the whole group). Returns whether anything was removed. A route through
  /// a nexthop object is never a sibling: its deletion (which follows `RTM_DELNEXTHOP`, the
  /// route already gone here) names the object's gateway and link, and must not take that hop
  /// from a gateway route of the same metric. The kernel oracle's fresh reads found it (IPv6
  /// seed 1848727498): `ip nexthop del` of a table's nexthop route took its plain sibling too.
  private mutating func deleteRoute(_ route: RouteInfo) -> Bool {
    let identity = Self.identity(route)
    if let index = routes.firstIndex(where: { Self.sameRoute($0, route) }) {
      let removed = routes.remove(at: index)
      if Self.takesSiblings(removed) {
        forgetOrder(of: identity)
      } else {
        hopsAfter[Self.key(removed)] = nil
      }
      return true
    }
    let deleted = Self.hops(of: route)
    guard Self.takesSiblings(route),
      let group = routes.firstIndex(where: { stored in
        let hops = Self.hops(of: stored)
        return Self.identity(stored) == identity && Self.takesSiblings(stored)
          && deleted.allSatisfy { hop in hops.contains { $0.matches(hop) } }
      })
    else { return false }
    // One sibling left the group: drop its hop (the first with its interface and gateway).
    var hops = Self.hops(of: routes[group])
    for hop in deleted {
      if let position = hops.firstIndex(where: { $0.matches(hop) }) { hops.remove(at: position) }
    }
    routes[group].interfaceIndices = hops.map(\.index)
    if !routes[group].hopGateways.isEmpty { routes[group].hopGateways = hops.map(\.gateway) }
    if hops.isEmpty {
      routes.remove(at: group)
      forgetOrder(of: identity)
    } else {
      // The routes between siblings lose the hop that left, wherever it was.
      for (key, var after) in hopsAfter where key.identity == identity {
        for hop in deleted {
          if let position = after.firstIndex(where: { $0.matches(hop) }) {
            after.remove(at: position)
          }
        }
        hopsAfter[key] = after.isEmpty ? nil : after
      }
    }
    return true
  }

  /// The group of `identity` is gone: no route of it is between siblings.
  private mutating func forgetOrder(of identity: RouteIdentity) {
    hopsAfter = hopsAfter.filter { $0.key.identity != identity }
  }

  /// Whether `stored` is the route a deletion notification `deleted` describes.
  /// (The same nexthop object, or the same hops and gateway.)
  private static func sameRoute(_ stored: RouteInfo, _ deleted: RouteInfo) -> Bool {
    guard identity(stored) == identity(deleted), stored.type == deleted.type else { return false }
    if stored.nexthopID != nil || deleted.nexthopID != nil {
      return stored.nexthopID == deleted.nexthopID
    }
    return stored.interfaceIndices == deleted.interfaceIndices && stored.gateway == deleted.gateway
  }
}
