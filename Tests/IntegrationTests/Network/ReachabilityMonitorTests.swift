import Foundation
import Logging
import Netlink
import Reachability
import TestSupport
import Testing

/// The live monitor against real rtnetlink in network namespaces these tests create.
@Suite(
  .blockingIO, .enabled(if: getuid() == 0, "needs root to create network namespaces and veth pairs")
)
struct ReachabilityMonitorTests {
  private func withMonitor(
    in sandbox: NamespaceSandbox, capture: NetlinkCapture? = nil,
    _ body: (ReachabilityMonitor) async throws -> Void
  ) async throws {
    let monitor = ReachabilityMonitor(
      configuration: ReachabilityConfiguration(
        sysfsRoot: "/nonexistent", networkNamespacePath: sandbox.path),
      logger: Logger(label: "test.reachability"), capture: capture)
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
  }

  /// One look on the calling thread (one-shot `status`): the kernel's state as it is, the
  /// same answer a running monitor publishes first, and hints applied after it.
  @Test("a snapshot reads the network on the calling thread and answers as run() does")
  func snapshotAnswersAsRunDoes() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("addr", "add", "192.0.2.1/24", "dev", "veth0")
    try sandbox.ip("route", "add", "default", "via", "192.0.2.254", "dev", "veth0")
    let configuration = ReachabilityConfiguration(
      sysfsRoot: "/nonexistent", networkNamespacePath: sandbox.path)
    let monitor = ReachabilityMonitor(
      configuration: configuration, logger: Logger(label: "test.reachability"))
    let snapshot = try monitor.snapshot()
    #expect(snapshot.isReachable && snapshot.primary == "veth0")
    #expect(monitor.status == snapshot)
    #expect(throws: MonitorError.alreadyRunning) { try monitor.snapshot() }
    // Hints still apply after the look.
    monitor.updateHints { $0.networkManagerMetered["veth0"] = .yes }
    #expect(monitor.status.isDataMetered)

    var running: NetworkStatus?
    try await withMonitor(in: sandbox) { monitor in
      running = try await monitor.firstStatus("initial dump") { _ in true }
    }
    #expect(running == snapshot)
  }

  @Test func defaultRouteThenRouteDeletedThenLinkDown() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let capturePath = "/tmp/\(sandbox.name).pcap"
    defer { unlink(capturePath) }
    try await withMonitor(in: sandbox, capture: try NetlinkCapture(path: capturePath)) { monitor in
      let initial = try await monitor.firstStatus("initial dump") { _ in true }
      #expect(!initial.isReachable)
      #expect(initial.links.map(\.name).sorted() == ["lo", "veth0", "veth1"])

      try sandbox.ip("link", "set", "veth0", "up")
      try sandbox.ip("addr", "add", "192.0.2.1/24", "dev", "veth0")
      try sandbox.ip("route", "add", "default", "via", "192.0.2.254", "dev", "veth0")
      let reachable = try await monitor.firstStatus("reachable via veth0") {
        $0.isReachable && $0.primary == "veth0"
      }
      #expect(reachable.primaryLink?.type == .virtual)
      #expect(!reachable.isDataMetered)

      try sandbox.ip("route", "del", "default", "via", "192.0.2.254", "dev", "veth0")
      _ = try await monitor.firstStatus("unreachable after route deletion") { !$0.isReachable }

      try sandbox.ip("route", "add", "default", "via", "192.0.2.254", "dev", "veth0")
      _ = try await monitor.firstStatus("reachable again") { $0.isReachable }
      try sandbox.ip("link", "set", "veth0", "down")
      let down = try await monitor.firstStatus("unreachable after link down") { !$0.isReachable }
      #expect(down.links.first { $0.name == "veth0" }?.isUp == false)

      // The kernel dropped the IPv4 route silently; bringing the link back must not revive it.
      try sandbox.ip("link", "set", "veth0", "up")
      // Wait for both ends to regain carrier (veth1 follows veth0), so no change is pending.
      let back = try await monitor.firstStatus("both veth ends up with carrier") {
        $0.links.filter { $0.name.hasPrefix("veth") }.allSatisfy { $0.isUp && $0.hasCarrier }
      }
      #expect(!back.isReachable)
      #expect(monitor.status == back)
    }
    let deletions = try PcapReader.records(atPath: capturePath).flatMap { record in
      NetlinkFraming.frames(in: record.message).compactMap { frame -> RouteInfo? in
        guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
          case .route(let route, .delete) = message.payload
        else { return nil }
        return route.isDefault && route.family == NetlinkConstant.familyIPv4 ? route : nil
      }
    }
    #expect(deletions.count == 1, "only the explicit `ip route del` sends an IPv4 RTM_DELROUTE")
  }

  @Test func ipv6OnlyDefaultRouteIsReachable() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try await withMonitor(in: sandbox) { monitor in
      _ = try await monitor.firstStatus("initial dump") { _ in true }
      try sandbox.ip("link", "set", "veth0", "up")
      try sandbox.ip("-6", "addr", "add", "2001:db8::1/64", "dev", "veth0", "nodad")
      try sandbox.ip("-6", "route", "add", "default", "via", "2001:db8::fe", "dev", "veth0")
      let status = try await monitor.firstStatus("IPv6-only reachable") { $0.isReachable }
      #expect(status.primary == "veth0")
    }
  }

  @Test func independentSubscribersSeeTheSameChanges() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try await withMonitor(in: sandbox) { monitor in
      let initial = try await monitor.firstStatus("initial dump") { _ in true }
      let first = monitor.statusUpdates()
      let second = monitor.statusUpdates()
      try sandbox.ip("link", "set", "veth0", "up")
      for updates in [first, second] {
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == initial)
        let next = await iterator.next()
        #expect(next?.links.first { $0.name == "veth0" }?.isUp == true)
      }
    }
  }
}
