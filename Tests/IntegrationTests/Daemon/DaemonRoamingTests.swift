import Foundation
import TestSupport
import Testing

/// The real daemon in a network namespace, with the ModemManager stand-in on a private bus
/// saying whether the modem whose bearer is the primary link (veth0) is roaming: a
/// `network = "not-roaming"` job runs at home, is stopped when roaming starts (a retry, no
/// attempt used), waits while roaming, and runs again at home; ModemManager restarting keeps
/// its last answer (stale).
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbus"),
  .timeLimit(.minutes(2)))
struct DaemonRoamingTests {
  static let id = "dev.e2e.roaming"

  /// A namespace whose veth0 carries the default route, one `not-roaming` job (its command
  /// appends `start` to the side-effect file, then sleeps when `long`), and the daemon on
  /// `bus` without NetworkManager.
  private func withDaemon(
    bus: PrivateBus, long: Bool, _ body: (DaemonHarness, DaemonWorkspace) async throws -> Void
  ) async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.234.0.1/24", "dev", "veth0")
    try sandbox.ip("addr", "add", "10.234.0.2/24", "dev", "veth1")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.234.0.2", "dev", "veth0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let script =
      "echo start >> \(workspace.file("side-effect"))" + (long ? " && exec sleep 60" : "")
    try workspace.writeConfig(
      jobs: "[network]\nnetworkmanager = false\n\n"
        + daemonShellJob(
          id: Self.id, script: script, schedule: "once = true",
          extra: "network = \"not-roaming\"\nbudget = \"2m\"\n"
            + "backoff = { policy = \"exponential\", initial = \"10s\" }"))
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    try await body(harness, workspace)
  }

  @Test func notRoamingJobFollowsTheRegistration() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let modemManager = ModemManagerStandIn(bus: bus)
    defer { modemManager.stop() }
    try modemManager.start(interface: "veth0", state: ModemManagerStandIn.home)
    try await withDaemon(bus: bus, long: true) { harness, workspace in
      try await daemonEventually("the run at home", describe: harness.describe()) {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      let home = try await harness.status()
      #expect(home.raw.contains("\"roaming\":false"), "\(home.raw)")

      try modemManager.setRegistration(ModemManagerStandIn.roaming)
      let stopped = try await harness.waitForTask(Self.id, "stopped by roaming") {
        $0.lastReason == "stopped: roaming"
      }
      #expect(stopped.attempt == 0, "a stop for a lost condition uses no attempt")
      #expect(stopped.recentRuns.contains { $0.outcome == "stopped" && $0.reason == "roaming" })
      let held = try await harness.waitForTask(Self.id, "held while roaming") {
        $0.predicateKinds.contains("notRoaming")
      }
      #expect(held.state != "running")
      let roaming = try await harness.status()
      #expect(roaming.raw.contains("\"roaming\":true"), "\(roaming.raw)")
      #expect(roaming.raw.contains("\"modemmanager:roaming\""), "\(roaming.raw)")
      let text = try await harness.cli("status", "--config", workspace.configPath)
      #expect(text.stdout.contains("a network that is not roaming"), "\(text.stdout)")
      // Due and gated: still held a while later.
      try await Task.sleep(for: .seconds(2))
      #expect(workspace.lines(of: "side-effect") == ["start"], "ran while roaming")

      try modemManager.setRegistration(ModemManagerStandIn.home)
      try await daemonEventually(
        "the run back home", timeout: .seconds(40), describe: harness.describe()
      ) {
        workspace.lines(of: "side-effect").count == 2 ? true : nil
      }
    }
  }

  @Test func restartedModemManagerKeepsItsLastAnswer() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let modemManager = ModemManagerStandIn(bus: bus)
    defer { modemManager.stop() }
    try modemManager.start(interface: "veth0", state: ModemManagerStandIn.roaming)
    try await withDaemon(bus: bus, long: false) { harness, workspace in
      _ = try await harness.waitForTask(Self.id, "held while roaming") {
        $0.predicateKinds.contains("notRoaming")
      }
      modemManager.stop()
      let stale = try await daemonEventually("ModemManager stale", describe: harness.describe()) {
        let status = try await harness.status()
        return status.raw.contains("\"name\":\"ModemManager\",\"since\"")
          && status.raw.contains("\"state\":\"stale\"") ? status : nil
      }
      #expect(stale.raw.contains("\"roaming\":true"), "the last answer is kept: \(stale.raw)")
      try await Task.sleep(for: .seconds(2))
      #expect(workspace.lines(of: "side-effect").isEmpty, "ran while ModemManager was away")

      // Back, still roaming: still held; then home: it runs.
      try modemManager.start(interface: "veth0", state: ModemManagerStandIn.roaming)
      _ = try await daemonEventually("ModemManager answered", describe: harness.describe()) {
        let status = try await harness.status()
        return status.raw.contains("\"state\":\"stale\"") ? nil : status
      }
      #expect(workspace.lines(of: "side-effect").isEmpty, "ran while roaming")
      try modemManager.setRegistration(ModemManagerStandIn.home)
      try await daemonEventually("the run at home", describe: harness.describe()) {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
    }
  }

  @Test func signalQualityChangesCauseNoReRead() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let modemManager = ModemManagerStandIn(bus: bus)
    defer { modemManager.stop() }
    try modemManager.start(interface: "veth0", state: ModemManagerStandIn.roaming)
    try await withDaemon(bus: bus, long: false) { harness, workspace in
      _ = try await harness.waitForTask(Self.id, "held while roaming") {
        $0.predicateKinds.contains("notRoaming")
      }
      let before = try modemManager.reads()
      for percent: UInt32 in [40, 55, 70] { try modemManager.setSignalQuality(percent) }
      // Signals arrive in order: once the registration change is seen, so were the others.
      try modemManager.setRegistration(ModemManagerStandIn.home)
      try await daemonEventually("the run at home", describe: harness.describe()) {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      #expect(try modemManager.reads() == before + 1, "one read, for the registration")
    }
  }

  @Test func withoutModemManagerANonCellularLinkIsNotHeld() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try await withDaemon(bus: bus, long: false) { harness, workspace in
      try await daemonEventually("the run", describe: harness.describe()) {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      let status = try await harness.status()
      #expect(
        status.raw.contains("\"name\":\"ModemManager\",\"state\":\"absent\""), "\(status.raw)")
    }
  }
}
