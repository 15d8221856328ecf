import Netlink
import Reachability
import Testing

/// The model's policy-routing walk (rules → tables → nexthop objects), with hand-made messages
/// shaped like the kernel's (wg-quick, nexthop objects).
@Suite struct PolicyRoutingModelTests {
  private let ethernet = LinkInfo(
    family: 0, index: 2, name: "eth0", flags: 0x10041, hardwareType: 1, kind: nil)
  private let wireguard = LinkInfo(
    family: 0, index: 3, name: "wg0", flags: 0x10041, hardwareType: 0xFFFE, kind: "wireguard")

  private func message(_ payload: RtnetlinkMessage.Payload, sequence: UInt32 = 0)
    -> RtnetlinkMessage
  {
    RtnetlinkMessage(
      header: NetlinkHeader(
        length: 0, type: 0, flags: sequence == 0 ? 0 : NetlinkConstant.flagMulti,
        sequence: sequence, portID: 0),
      payload: payload)
  }

  private func defaultRoute(table: UInt32, metric: UInt32, link: Int32, nexthop: UInt32? = nil)
    -> RouteInfo
  {
    RouteInfo(
      family: 2, table: table, type: 1, routingProtocol: 4, destinationPrefixLength: 0,
      destination: [], metric: metric, interfaceIndices: nexthop == nil ? [link] : [],
      nexthopID: nexthop)
  }

  /// eth0 and wg0 up with global IPv4 addresses; main table default via eth0.
  private func twoLinks() -> ReachabilityModel {
    var model = ReachabilityModel()
    for link in [ethernet, wireguard] {
      model.apply(message(.link(link, .new)))
      model.apply(
        message(
          .address(
            AddressInfo(
              family: 2, interfaceIndex: link.index, prefixLength: 24, scope: 0, flags: 0,
              address: [192, 0, UInt8(link.index), 1]), .new)))
    }
    model.apply(message(.route(defaultRoute(table: 254, metric: 100, link: 2), .new)))
    return model
  }

  /// `ip rule` as the kernel dumps it after `wg-quick up`.
  private func dumpWgQuickRules(into model: inout ReachabilityModel) {
    model.apply(message(.dumpRequest(.rule), sequence: 7))
    let rules = [
      RuleInfo(family: 2, priority: 0, table: 255),
      RuleInfo(family: 2, priority: 32764, table: 254, suppressPrefixLength: 0),
      RuleInfo(
        family: 2, priority: 32765, table: 51820, isInverted: true, firewallMark: 51820,
        firewallMask: .max),
      RuleInfo(family: 2, priority: 32766, table: 254),
      RuleInfo(family: 2, priority: 32767, table: 253),
    ]
    for rule in rules { model.apply(message(.rule(rule, .new), sequence: 7)) }
    model.apply(message(.done, sequence: 7))
  }

  @Test func withoutRulesOnlyTheMainTableCounts() {
    var model = twoLinks()
    model.apply(message(.route(defaultRoute(table: 51820, metric: 0, link: 3), .new)))
    #expect(model.status().primary == "eth0")
    #expect(model.status().links.first { $0.name == "wg0" }?.hasDefaultRoute == false)
  }

  @Test func wgQuickRulesSendTrafficThroughTheTunnelWhichInheritsMetered() {
    var model = twoLinks()
    model.overrides = InterfaceOverrides(metered: ["eth0"], unmetered: [])
    model.apply(message(.route(defaultRoute(table: 51820, metric: 0, link: 3), .new)))
    dumpWgQuickRules(into: &model)
    let status = model.status()
    #expect(status.primary == "wg0")
    #expect(status.isDataMetered, "the tunnel inherits metered from its underlay eth0")
    #expect(status.primaryLink?.meteredReason == .tunnelInherits(from: "eth0"))
  }

  @Test func markedTrafficRuleAloneDoesNotMatchAnUnmarkedLookup() {
    var model = twoLinks()
    model.apply(message(.route(defaultRoute(table: 51820, metric: 0, link: 3), .new)))
    model.apply(
      message(
        .rule(
          RuleInfo(
            family: 2, priority: 100, table: 51820, firewallMark: 51820, firewallMask: .max),
          .new)))
    #expect(model.status().primary == "eth0")
  }

  @Test func unreachableRuleStopsTheWalk() {
    var model = twoLinks()
    model.apply(message(.rule(RuleInfo(family: 2, priority: 10, action: 7, table: 0), .new)))
    #expect(!model.status().isReachable)
  }

  @Test func destinationSelectorFollowsTheProbeDestination() {
    var model = twoLinks()
    model.apply(message(.route(defaultRoute(table: 100, metric: 0, link: 3), .new)))
    model.apply(
      message(
        .rule(
          RuleInfo(
            family: 2, priority: 10, table: 100, destinationPrefixLength: 8,
            destination: [10, 0, 0, 0]), .new)))
    #expect(model.status().primary == "eth0")
    model.probeDestinations = try! EgressProbeDestinations(addresses: ["10.1.2.3"])
    #expect(model.status().primary == "wg0")
  }

  @Test func defaultRouteThroughANexthopObjectUsesItsLink() {
    var model = twoLinks()
    model.apply(
      message(.nexthop(NexthopInfo(id: 1, family: 2, interfaceIndex: 3), .new)))
    model.apply(
      message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 1), .new)))
    #expect(model.status().primary == "wg0")
    #expect(model.status().links.first { $0.name == "wg0" }?.hasDefaultRoute == true)
  }

  @Test func nexthopGroupAndBlackholeAreResolved() {
    var model = twoLinks()
    model.apply(message(.nexthop(NexthopInfo(id: 1, family: 2, interfaceIndex: 3), .new)))
    model.apply(
      message(.nexthop(NexthopInfo(id: 9, family: 0, interfaceIndex: 0, group: [1]), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 9), .new)))
    #expect(model.status().primary == "wg0")
    model.apply(
      message(.nexthop(NexthopInfo(id: 9, family: 0, interfaceIndex: 0, isBlackhole: true), .new)))
    #expect(!model.status().isReachable, "a blackhole at metric 50 hides eth0's metric 100")
  }

  @Test func linkDownRemovesItsNexthopAndTheRoutesUsingIt() {
    var model = twoLinks()
    model.apply(message(.nexthop(NexthopInfo(id: 1, family: 2, interfaceIndex: 3), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 1), .new)))
    var down = wireguard
    down.flags = 0
    model.apply(message(.link(down, .new)))
    model.apply(message(.link(wireguard, .new)))
    #expect(model.status().primary == "eth0")
  }

  /// The kernel oracle found it (dual-stack seed 3949917275): a link losing carrier loses its
  /// nexthop objects, and the routes using them, without a notification; a group left without
  /// members goes too. Plain routes stay.
  @Test func carrierLossRemovesItsNexthopsTheirGroupsAndRoutesButNotPlainRoutes() {
    var model = twoLinks()
    model.apply(message(.nexthop(NexthopInfo(id: 1, family: 2, interfaceIndex: 3), .new)))
    model.apply(
      message(.nexthop(NexthopInfo(id: 9, family: 0, interfaceIndex: 0, group: [1]), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 1), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 60, link: 0, nexthop: 9), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 70, link: 3), .new)))
    #expect(model.status().primary == "wg0")
    var carrierless = wireguard
    carrierless.flags = NetlinkConstant.interfaceUp
    model.apply(message(.link(carrierless, .new)))
    model.apply(message(.link(wireguard, .new)))
    // The metric-70 plain route via wg0 is back with the carrier; the nexthop routes are not.
    #expect(model.status().primary == "wg0")
    #expect(model.status().links.first { $0.name == "wg0" }?.hasDefaultRoute == true)
    model.apply(message(.route(defaultRoute(table: 254, metric: 70, link: 3), .delete)))
    #expect(model.status().primary == "eth0", "the nexthop routes went with the carrier")
  }

  /// The kernel oracle found it (dual-stack seed 468007242): when a link loses its last IPv4
  /// address the kernel removes the IPv4 routes with hops of their own on it, not those
  /// through a nexthop object (nor the object).
  @Test func lastIPv4AddressGoneKeepsRoutesThroughNexthopObjects() {
    var model = twoLinks()
    model.apply(message(.nexthop(NexthopInfo(id: 1, family: 2, interfaceIndex: 3), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 40, link: 3), .new)))
    model.apply(message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 1), .new)))
    let address = AddressInfo(
      family: 2, interfaceIndex: 3, prefixLength: 24, scope: 0, flags: 0, address: [192, 0, 3, 1])
    model.apply(message(.address(address, .delete)))
    #expect(model.status().primary == "eth0", "wg0 has no IPv4 address")
    model.apply(message(.address(address, .new)))
    #expect(model.status().primary == "wg0", "the route through nexthop object 1 stayed")
    model.apply(message(.route(defaultRoute(table: 254, metric: 50, link: 0, nexthop: 1), .delete)))
    #expect(model.status().primary == "eth0", "the metric-40 route went with the address")
  }

  @Test func probeDestinationsMustBeAddresses() throws {
    let destinations = try EgressProbeDestinations(addresses: ["2001:db8::1", "192.0.2.9"])
    #expect(destinations.ipv4 == [192, 0, 2, 9])
    #expect(destinations.ipv6.prefix(4) == [0x20, 0x01, 0x0D, 0xB8])
    let error = #expect(throws: InvalidProbeDestination.self) {
      try EgressProbeDestinations(addresses: ["connectivity-check.example"])
    }
    #expect(error?.description.contains("connectivity-check.example") == true)
  }
}
