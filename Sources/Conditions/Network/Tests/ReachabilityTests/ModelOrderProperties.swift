import Netlink
import PropertyBased
import Reachability
import TestSupport
import Testing

/// One kernel state: which of three links exist and how, which addresses and default routes
/// they have. Every object appears once, so the final state does not depend on the order in
/// which its messages arrive.
struct KernelState: Sendable, CustomStringConvertible {
  /// Per link: 0 absent, 1 up with carrier, 2 up without carrier, 3 down.
  var links: [Int]
  /// Per link: bit 0 an IPv4 address, bit 1 a global IPv6 address.
  var addresses: [Int]
  /// Per link: 0 no default route, else the IPv4 default route's metric step (routes of a
  /// link that is down or absent are left out: the kernel has none).
  var ipv4Routes: [Int]
  /// Per link, likewise for IPv6.
  var ipv6Routes: [Int]

  static let names = ["enp3s0", "wlp2s0", "wwan0"]
  static let facts = [
    LinkFacts(hasDevice: true), LinkFacts(isWireless: true, hasDevice: true),
    LinkFacts(deviceType: "wwan", hasDevice: true),
  ]

  var description: String {
    "links \(links) addresses \(addresses) v4 routes \(ipv4Routes) v6 routes \(ipv6Routes)"
  }

  /// The messages the kernel would send to describe this state, in a canonical order.
  var messages: [RtnetlinkMessage.Payload] {
    var payloads: [RtnetlinkMessage.Payload] = []
    for slot in 0..<3 where links[slot] != 0 {
      let index = Int32(slot + 2)
      let flags: UInt32 = [0, 0x10043, 0x1003, 0x1002][links[slot]]
      payloads.append(
        .link(
          LinkInfo(
            family: 0, index: index, name: Self.names[slot], flags: flags, hardwareType: 1,
            kind: nil), .new))
      if addresses[slot] & 1 != 0 {
        payloads.append(
          .address(
            AddressInfo(
              family: 2, interfaceIndex: index, prefixLength: 24, scope: 0, flags: 0,
              address: [10, 0, UInt8(slot), 2]), .new))
      }
      if addresses[slot] & 2 != 0 {
        payloads.append(
          .address(
            AddressInfo(
              family: 10, interfaceIndex: index, prefixLength: 64, scope: 0, flags: 0,
              address: [0x20, 0x01, 0x0d, 0xb8, 0, UInt8(slot)] + Array(repeating: 0, count: 9)
                + [2]), .new))
      }
      guard links[slot] != 3 else { continue }
      for (family, metric) in [(UInt8(2), ipv4Routes[slot]), (10, ipv6Routes[slot])]
      where metric != 0 {
        payloads.append(
          .route(
            RouteInfo(
              family: family, table: 254, type: 1, routingProtocol: 4,
              destinationPrefixLength: 0, destination: [], metric: UInt32(metric * 100),
              interfaceIndices: [index]), .new))
      }
    }
    return payloads
  }
}

/// Any order of the messages describing one kernel state gives the same answer.
@Suite(.cpuBound) struct ModelOrderProperties {
  static let states = zip(
    Gen.int(in: 0...3).array(of: 3), Gen.int(in: 0...3).array(of: 3),
    Gen.int(in: 0...3).array(of: 3), Gen.int(in: 0...3).array(of: 3)
  ).map { KernelState(links: $0.0, addresses: $0.1, ipv4Routes: $0.2, ipv6Routes: $0.3) }

  /// The model's answer after `payloads`, as events (no dump), in this order.
  static func answer(_ payloads: [RtnetlinkMessage.Payload]) -> NetworkStatus {
    var model = ReachabilityModel()
    for (slot, name) in KernelState.names.enumerated() {
      model.setFacts(KernelState.facts[slot], forInterface: name)
    }
    for payload in payloads {
      model.apply(
        RtnetlinkMessage(
          header: NetlinkHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0),
          payload: payload))
    }
    return model.status()
  }

  @Test("every order of one kernel state's messages gives the same status")
  func orderDoesNotMatter() async {
    await propertyCheck(
      count: 500, input: Self.states, Gen.int(in: 0...1_000).array(of: 20)
    ) { state, keys in
      let canonical = state.messages
      let shuffled = canonical.indices.sorted { (keys[$0 % 20], $0) < (keys[$1 % 20], $1) }
        .map { canonical[$0] }
      #expect(Self.answer(shuffled) == Self.answer(canonical), "\(state), order \(shuffled)")
    }
  }
}
