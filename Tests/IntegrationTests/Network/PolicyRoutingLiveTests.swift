import Foundation
import Logging
import Netlink
import Reachability
import TestSupport
import Testing

/// Where traffic really leaves, against real rtnetlink: wg-quick-style policy routing and a
/// nexthop-object default route. The live primary must be what `ip route get` says, and the
/// model must say the same when the capture of the run is replayed.
@Suite(
  .blockingIO, .enabled(if: getuid() == 0, "needs root to create network namespaces and veth pairs")
)
struct PolicyRoutingLiveTests {
  /// The sandbox plus a second veth pair veth2/veth3; veth0 and veth2 up with IPv4 addresses,
  /// a main-table default route via veth0.
  private func twoUplinks() throws -> NamespaceSandbox {
    let sandbox = try NamespaceSandbox.create()
    do {
      try sandbox.ip("link", "add", "veth2", "type", "veth", "peer", "name", "veth3")
      for link in ["veth3", "veth0", "veth2"] { try sandbox.ip("link", "set", link, "up") }
      try sandbox.ip("addr", "add", "192.0.2.1/24", "dev", "veth0")
      try sandbox.ip("addr", "add", "198.51.100.1/24", "dev", "veth2")
      try sandbox.ip(
        "route", "add", "default", "via", "192.0.2.254", "dev", "veth0", "metric", "100")
    } catch {
      sandbox.remove()
      throw error
    }
    return sandbox
  }

  private func withCapturedMonitor(
    in sandbox: NamespaceSandbox, probing destinations: [String] = [],
    _ body: (ReachabilityMonitor) async throws -> Void
  ) async throws -> ReachabilityReplay.Result {
    let path = "/tmp/\(sandbox.name).pcapng"
    defer { unlink(path) }
    let capture = try NetlinkCapture(path: path)
    var configuration = ReachabilityConfiguration(
      sysfsRoot: "/nonexistent", networkNamespacePath: sandbox.path)
    configuration.egressProbeDestinations = destinations
    let monitor = ReachabilityMonitor(
      configuration: configuration, logger: Logger(label: "test.policy"), capture: capture)
    let running = Task { try await monitor.run() }
    do {
      try await body(monitor)
    } catch {
      running.cancel()
      _ = try? await running.value
      throw error
    }
    running.cancel()
    try await running.value
    try capture.close()
    configuration.networkNamespacePath = nil
    return try ReachabilityReplay.replay(pcapAt: path, configuration: configuration)
  }

  @Test func wgQuickPolicyRoutingLeavesThroughTheTableOfTheRule() async throws {
    let sandbox = try twoUplinks()
    defer { sandbox.remove() }
    let replay = try await withCapturedMonitor(in: sandbox) { monitor in
      _ = try await monitor.firstStatus("main table via veth0") { $0.primary == "veth0" }
      try sandbox.ip(
        "route", "add", "default", "via", "198.51.100.254", "dev", "veth2", "table", "51820")
      try sandbox.ip("rule", "add", "not", "fwmark", "51820", "table", "51820")
      try sandbox.ip("rule", "add", "table", "main", "suppress_prefixlength", "0")
      let status = try await monitor.firstStatus("policy routing via veth2") {
        $0.primary == "veth2"
      }
      #expect(try routeGet(sandbox, "8.8.8.8") == "veth2")
      #expect(status.links.first { $0.name == "veth2" }?.hasDefaultRoute == true)
    }
    #expect(replay.finalStatus.primary == "veth2", "the model walks the same rules")
  }

  @Test func nexthopObjectDefaultRouteAndItsLinkGoingDown() async throws {
    let sandbox = try twoUplinks()
    defer { sandbox.remove() }
    let replay = try await withCapturedMonitor(in: sandbox) { monitor in
      _ = try await monitor.firstStatus("main table via veth0") { $0.primary == "veth0" }
      try sandbox.ip("nexthop", "add", "id", "1", "via", "198.51.100.254", "dev", "veth2")
      try sandbox.ip("route", "add", "default", "nhid", "1", "metric", "50")
      _ = try await monitor.firstStatus("nexthop route via veth2") { $0.primary == "veth2" }
      #expect(try routeGet(sandbox, "8.8.8.8") == "veth2")
      try sandbox.ip("link", "set", "veth2", "down")
      _ = try await monitor.firstStatus("back to veth0") { $0.primary == "veth0" }
      #expect(try routeGet(sandbox, "8.8.8.8") == "veth0")
    }
    #expect(replay.steps.map(\.status.primary).contains("veth2"))
    #expect(replay.finalStatus.primary == "veth0")
  }

  @Test func configuredProbeDestinationDecidesThePrimary() async throws {
    let sandbox = try twoUplinks()
    defer { sandbox.remove() }
    try sandbox.ip(
      "route", "add", "default", "via", "198.51.100.254", "dev", "veth2", "table", "100")
    try sandbox.ip("rule", "add", "to", "203.0.113.0/24", "table", "100")
    let replay = try await withCapturedMonitor(in: sandbox, probing: ["203.0.113.7"]) {
      monitor in
      _ = try await monitor.firstStatus("the check host's route via veth2") {
        $0.primary == "veth2"
      }
      #expect(try routeGet(sandbox, "203.0.113.7") == "veth2")
    }
    #expect(replay.finalStatus.primary == "veth2")
  }

  @Test func probeDestinationThatIsNotAnAddressIsRefused() async throws {
    var configuration = ReachabilityConfiguration()
    configuration.egressProbeDestinations = ["check.example.org"]
    let monitor = ReachabilityMonitor(
      configuration: configuration, logger: Logger(label: "test.policy"))
    let error = await #expect(throws: InvalidProbeDestination.self) { try await monitor.run() }
    #expect(error?.text == "check.example.org")
  }

  @Test func nonDefaultRoutesPublishNothing() async throws {
    let sandbox = try twoUplinks()
    defer { sandbox.remove() }
    _ = try await withCapturedMonitor(in: sandbox) { monitor in
      let settled = try await monitor.firstStatus("main table via veth0") { $0.primary == "veth0" }
      var updates = monitor.statusUpdates().makeAsyncIterator()
      #expect(await updates.next() == settled)
      let batch = (0..<500).map { "route add 10.\($0 / 256).\($0 % 256).0/24 via 198.51.100.254" }
      try ipBatch(sandbox, batch.joined(separator: "\n"))
      try sandbox.ip("link", "set", "veth2", "down")  // the marker: one real change
      let next = await updates.next()
      #expect(next?.links.first { $0.name == "veth2" }?.isUp == false)
    }
  }

  /// Bursts of default-route changes (`ip -batch`, on another CPU) while the monitor's lookups
  /// are in flight: after every burst the monitor must end where the kernel is. The kernel
  /// answers lookups without the routing lock, so an answer can predate a change whose
  /// notification is read first; that window is too narrow to hit on demand here (the rule is
  /// checked by `EgressLookupBatchTests`), the test checks that bursts settle right.
  @Test func everyBurstOfDefaultRouteChangesEndsWithTheKernelsAnswer() async throws {
    let sandbox = try twoUplinks()
    defer { sandbox.remove() }
    let add = "route add default via 198.51.100.254 dev veth2 metric 50"
    let delete = "route del default via 198.51.100.254 dev veth2 metric 50"
    _ = try await withCapturedMonitor(in: sandbox) { monitor in
      _ = try await monitor.firstStatus("main table via veth0") { $0.primary == "veth0" }
      var added = false
      for round in 1...12 {
        // 201 changes: the route's presence flips.
        let commands = (0..<201).map { ($0 % 2 == 0) != added ? add : delete }
        try ipBatch(sandbox, commands.joined(separator: "\n"))
        added.toggle()
        let expected = added ? "veth2" : "veth0"
        #expect(try routeGet(sandbox, "8.8.8.8") == expected)
        try await settle(monitor, on: expected, after: "burst \(round)")
      }
    }
  }

  /// Waits until the monitor's primary is `primary`, and checks that it stays there.
  private func settle(_ monitor: ReachabilityMonitor, on primary: String, after what: String)
    async throws
  {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while monitor.status.primary != primary {
      guard clock.now < deadline else {
        Issue.record("\(what): primary still \(monitor.status.primary ?? "none"), not \(primary)")
        return
      }
      try await Task.sleep(for: .milliseconds(5))
    }
    try await Task.sleep(for: .milliseconds(200))
    #expect(monitor.status.primary == primary, "\(what): the primary moved away again")
  }

  /// The `dev` of `ip route get ADDRESS` in the sandbox.
  private func routeGet(_ sandbox: NamespaceSandbox, _ address: String) throws -> String? {
    let words = try ip(["-n", sandbox.name, "route", "get", address], input: nil)
      .split(separator: " ")
    return words.firstIndex(of: "dev").map { String(words[$0 + 1]) }
  }

  private func ipBatch(_ sandbox: NamespaceSandbox, _ commands: String) throws {
    _ = try ip(["-n", sandbox.name, "-batch", "-"], input: commands + "\n")
  }

  private func ip(_ arguments: [String], input: String?) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    let output = Pipe()
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = output
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
      throw NamespaceSandbox.CommandFailed(
        command: "ip " + arguments.joined(separator: " "), output: text)
    }
    return text
  }
}
