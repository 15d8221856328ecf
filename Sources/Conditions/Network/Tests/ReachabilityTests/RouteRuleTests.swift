import Reachability
import Testing

@Suite struct RouteRuleTests {
  @Test func lowestMetricWinsThenCarrierLossSwitchesWithoutRouteDeletion() throws {
    let replay = try FixtureReplay.run("wired-and-wifi")
    let primaries = replay.steps.map(\.status.primary)
    #expect(primaries == ["enp3s0", "wlp2s0"])
    let final = replay.finalStatus
    #expect(final.links.first { $0.name == "enp3s0" }?.hasCarrier == false)
    #expect(final.links.first { $0.name == "enp3s0" }?.hasDefaultRoute == false)
    #expect(final.links.first { $0.name == "wlp2s0" }?.hasDefaultRoute == true)
  }

  @Test func equalMetricRoutesOnDifferentLinksStayDistinct() throws {
    let replay = try FixtureReplay.run("equal-metric")
    #expect(replay.steps.first?.status.primary == "enp3s0")
    #expect(replay.steps.first?.status.links.filter(\.hasDefaultRoute).count == 2)
    #expect(replay.finalStatus.isReachable)
    #expect(replay.finalStatus.primary == "enp4s0")
  }

  @Test func defaultRouteNeedsAUsableGlobalAddressOfItsFamily() throws {
    let status = try FixtureReplay.status("no-global-address")
    #expect(!status.isReachable)
    #expect(status.primary == nil)
  }

  @Test func noCarrierAndLoopbackNeverCount() throws {
    let status = try FixtureReplay.status("no-carrier")
    #expect(!status.isReachable)
    #expect(status.links.allSatisfy { !$0.hasDefaultRoute })
  }

  @Test func multipathUsesAHopWithCarrier() throws {
    let status = try FixtureReplay.status("multipath")
    #expect(status.primary == "enp4s0")
  }

  @Test func onlyUnicastDefaultRoutesOfTheMainTableCount() throws {
    let status = try FixtureReplay.status("not-default")
    #expect(!status.isReachable)
  }

  @Test func realCaptureLinkDownMakesUnreachableWithoutIPv4RouteDeletion() throws {
    let replay = try FixtureReplay.run("real-veth-dual-stack-link-down")
    let reachable = replay.steps.filter(\.status.isReachable)
    #expect(reachable.first?.status.primary == "veth0")
    #expect(replay.steps.last?.status.isReachable == false)
    #expect(replay.finalStatus.links.first { $0.name == "veth0" }?.isUp == false)
    #expect(replay.finalStatus.links.first { $0.name == "veth0" }?.type == .virtual)
  }

  @Test func realCaptureIPv6OnlyDefaultRoute() throws {
    let replay = try FixtureReplay.run("real-veth-ipv6-only")
    #expect(replay.steps.contains { $0.status.isReachable && $0.status.primary == "veth0" })
    #expect(replay.finalStatus.isReachable == false)
  }

  @Test func garbledMessagesAreCountedAndTheRestStaysRight() throws {
    let replay = try FixtureReplay.run("garbled-messages")
    #expect(replay.finalStatus.malformedMessages == 3)
    #expect(replay.warnings.filter { $0.contains("malformed") }.count == 3)
    #expect(replay.finalStatus.primary == "wlp2s0")
    #expect(replay.finalStatus.links.map(\.name) == ["lo", "enp3s0", "wlp2s0"])
  }

  @Test func statusIsOnlyPublishedAfterTheInitialDump() throws {
    let replay = try FixtureReplay.run("wired")
    #expect(replay.steps.count == 1)
    #expect(replay.steps[0].status == replay.finalStatus)
  }
}
