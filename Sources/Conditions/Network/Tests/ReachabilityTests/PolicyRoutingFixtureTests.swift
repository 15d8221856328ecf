import Netlink
import Reachability
import Testing

/// Real captures of policy routing (Fixtures/netlink/capture-policy.sh): they hold the kernel's
/// answers to the monitor's `RTM_GETROUTE` lookups, so the model's replay can be checked
/// against what the kernel said at each moment.
@Suite struct PolicyRoutingFixtureTests {
  /// Each recorded IPv4 lookup answer: capture time and the output interface index.
  private func kernelAnswers(_ records: [PcapRecord]) -> [(time: Int64, index: Int32)] {
    records.flatMap { record in
      NetlinkFraming.frames(in: record.message).compactMap { frame -> (Int64, Int32)? in
        guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
          RouteLookupRequest.isLookup(message.header),
          case .route(let route, .new) = message.payload,
          route.family == NetlinkConstant.familyIPv4, let index = route.interfaceIndices.first
        else { return nil }
        return (record.timestampMicroseconds, index)
      }
    }
  }

  /// Replays `name` and checks that after every change the model named the link the kernel
  /// named; returns the primaries the kernel named, in order.
  private func replayAgreesWithTheKernel(_ name: String) throws -> [String] {
    let path = "\(FixtureReplay.directory)/\(name).pcapng"
    let records = try PcapReader.records(atPath: path)
    let replay = try ReachabilityReplay.replay(
      pcapAt: path, configuration: ReachabilityConfiguration(sysfsRoot: "/nonexistent"))
    let answers = kernelAnswers(records)
    #expect(!answers.isEmpty, "the capture holds the monitor's lookups")
    return answers.map { answer in
      let kernel = replay.finalStatus.links.first { $0.index == answer.index }?.name
      let model = replay.steps.last { $0.timestampMicroseconds <= answer.time }?.status.primary
      #expect(model == kernel, "at \(answer.time) the kernel said \(kernel ?? "-")")
      return kernel ?? "-"
    }
  }

  @Test func wgQuickRulesLeadToTheTunnelTableLikeTheKernel() throws {
    let said = try replayAgreesWithTheKernel("policy-wg-quick")
    #expect(said.first == "veth0")
    #expect(said.last == "veth2")
  }

  @Test func nexthopObjectRouteAndItsLinkDownLikeTheKernel() throws {
    let said = try replayAgreesWithTheKernel("nexthop-object")
    #expect(said.contains("veth2"))
    #expect(said.last == "veth0")
  }
}
