import Reachability
import Testing

/// The kernel oracle's failures kept as replay fixtures: each capture is the monitor's record
/// of a shrunk failing run of `KernelDifferentialTests` (Tests/IntegrationTests), made with
/// the model's fix reverted. Replayed through today's model, the end of each must be what the
/// kernel held then: the primary link `ip route get` (or a fresh monitor's read of the
/// namespace) named, and the links with a default route. The fast tests keep these seeds
/// without root or namespaces.
@Suite struct KernelOracleFixtureTests {
  struct Fixture: Sendable, CustomStringConvertible {
    var name: String
    var primary: String
    var linksWithADefaultRoute: Set<String>
    var description: String { name }
  }

  static let fixtures = [
    // Dual-stack seed 468007242: lan0's last IPv4 address deleted and added again; the
    // kernel keeps `default nhid 1 metric 200` (its hop is a nexthop object's), the model
    // dropped it. Kernel: IPv4 via lan0 (metric 200), IPv6 via lan1 (metric 100).
    Fixture(
      name: "oracle-dual-stack-last-ipv4-address", primary: "lan1",
      linksWithADefaultRoute: ["lan0", "lan1"]),
    // IPv6 seed 1848727498: `ip nexthop del` of a table's nexthop route; its RTM_DELROUTE
    // (compatibility mode names the object's gateway and link) took the gateway route beside
    // it in that table.
    Fixture(
      name: "oracle-ipv6-nexthop-route-deleted", primary: "lan1",
      linksWithADefaultRoute: ["lan0", "lan1"]),
    // IPv6 seed 36547641: siblings appended to a group; the notification lists the new hop
    // first, the kernel keeps it last, and the first hop is the model's fallback.
    Fixture(
      name: "oracle-ipv6-appended-sibling", primary: "lan1",
      linksWithADefaultRoute: ["lan0", "lan1"]),
    // IPv6 seed 1 (router advertisements): hot0p and lan1p advertise, then lan1p again with
    // another preference; the kernel updates lan1's route in place with NLM_F_REPLACE, which
    // the model took for a replace of hot0's.
    Fixture(
      name: "oracle-ipv6-router-preference", primary: "lan0",
      linksWithADefaultRoute: ["lan0", "lan1", "hot0"]),
    // IPv6 seed 166568022 (routers' routes at metric 1024): hot0p's router route sat between
    // the siblings via hot0 and lan0, so it stayed when hot0 went down (the kernel's walk jumps
    // over it); the model dropped it, and after hot0 came back hot0 had no default route here.
    Fixture(
      name: "oracle-ipv6-router-between-siblings", primary: "lan1",
      linksWithADefaultRoute: ["lan1", "hot0"]),
  ]

  @Test(arguments: fixtures) func replayEndsWhereTheKernelWas(_ fixture: Fixture) throws {
    let replay = try ReachabilityReplay.replay(
      pcapAt: "\(FixtureReplay.directory)/\(fixture.name).pcapng",
      configuration: ReachabilityConfiguration(
        sysfsRoot: "/nonexistent", meteredOverrides: ["hot*"]))
    #expect(replay.warnings.isEmpty)
    let status = replay.finalStatus
    #expect(status.primary == fixture.primary)
    #expect(
      Set(status.links.filter(\.hasDefaultRoute).map(\.name)) == fixture.linksWithADefaultRoute)
    #expect(status.links.first { $0.name == "hot0" }?.isMetered == true)
  }
}
