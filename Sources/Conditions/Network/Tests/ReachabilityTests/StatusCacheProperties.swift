import Netlink
import PropertyBased
import TestSupport
import Testing

@testable import Reachability

/// The statuses the engine publishes come through ``StatusCache``, which hands out a status
/// computed before when its inputs look the same: whatever the model went through, the cached
/// status must be the one computed afresh.
@Suite(.cpuBound) struct StatusCacheProperties {
  /// What the kernel may answer for one family's probe destination.
  static let answers: [ReachabilityModel.KernelEgress?] = [
    nil, .unreachable, .route(interfaceIndex: 2, table: 254, metric: nil),
    .route(interfaceIndex: 3, table: 254, metric: 100),
    .route(interfaceIndex: 4, table: 254, metric: nil),
  ]

  @Test("a status from the cache is the status computed afresh, step after step")
  func cachedStatusIsFreshStatus() async {
    // Few states and answers, revisited often: the cache hits, by shared storage and by
    // equal values of tables rebuilt since.
    await propertyCheck(
      count: 300, input: ModelOrderProperties.states, Self.routes.array(of: 3),
      Gen.int(in: 0...3).array(of: 12), Gen.int(in: 0...(Self.answers.count - 1)).array(of: 24),
      Gen.int(in: 0...5).array(of: 12)
    ) { base, routes, path, answers, events in
      // Four states: `base`, and its links and addresses with other default routes.
      let states =
        [base]
        + routes.map {
          KernelState(
            links: base.links, addresses: base.addresses, ipv4Routes: $0.0, ipv6Routes: $0.1)
        }
      var model = ReachabilityModel()
      for (slot, name) in KernelState.names.enumerated() {
        model.setFacts(KernelState.facts[slot], forInterface: name)
      }
      var cache = StatusCache()
      var current: [RtnetlinkMessage.Payload] = []
      for (step, stateIndex) in path.enumerated() {
        let next = states[stateIndex].messages
        // Between two steps, as the kernel tells it: the objects of the last state that are
        // not in the next one removed (routes first), then the next one's new objects; or
        // nothing at all, a malformed message, a hint.
        switch events[step] {
        case 0: break
        case 1: model.recordMalformed()
        case 2: model.hints.ssids["wlp2s0"] = step % 2 == 0 ? "Pixel" : nil
        default:
          let changes =
            Self.deletions(of: current.filter { !next.contains($0) })
            + next.filter { !current.contains($0) }
          for payload in changes { Self.apply(payload, to: &model) }
          current = next
        }
        var egress = ReachabilityModel.KernelAnswers()
        egress[NetlinkConstant.familyIPv4] = Self.answers[answers[2 * step]]
        egress[NetlinkConstant.familyIPv6] = Self.answers[answers[2 * step + 1]]
        let cached = model.status(kernelEgress: egress, cache: &cache)
        let fresh = model.status(kernelEgress: egress)
        #expect(cached == fresh, "step \(step): states \(states), path \(path), events \(events)")
      }
    }
  }

  /// The default routes of one state: per link, IPv4 and IPv6 metric steps (0: none).
  static let routes = zip(Gen.int(in: 0...3).array(of: 3), Gen.int(in: 0...3).array(of: 3))

  /// The delete messages for the objects `payloads` added, routes and addresses before links.
  static func deletions(of payloads: [RtnetlinkMessage.Payload]) -> [RtnetlinkMessage.Payload] {
    payloads.reversed().compactMap { payload in
      switch payload {
      case .link(let link, _): .link(link, .delete)
      case .address(let address, _): .address(address, .delete)
      case .route(let route, _): .route(route, .delete)
      default: nil
      }
    }
  }

  static func apply(_ payload: RtnetlinkMessage.Payload, to model: inout ReachabilityModel) {
    model.apply(
      RtnetlinkMessage(
        header: NetlinkHeader(length: 0, type: 0, flags: 0, sequence: 0, portID: 0),
        payload: payload))
  }
}
