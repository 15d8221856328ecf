import Foundation
import TestSupport
import Testing

/// The real daemon in a network namespace with python-dbusmock's NetworkManager on a private
/// bus (fast coverage; the real NetworkManager runs in the nspawn harness): unknown is not
/// permission at start, a departed NetworkManager's answer holds work until the stale limit,
/// a silent one is bounded by the source timeout, and `status` shows the daemon's view.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .enabled(if: PrivateBus.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(2)))
struct DaemonNetworkManagerTests {
  static let metered: UInt32 = 1
  static let notMetered: UInt32 = 2
  static let guessYes: UInt32 = 3
  static let id = "dev.e2e.nm"

  /// A namespace whose veth0 carries the default route (the kernel calls it unmetered), a
  /// workspace whose one job needs `network`, and the daemon on `bus`.
  private func withDaemon(
    bus: PrivateBus, network: String = "unmetered", settings: String = "",
    _ body: (DaemonHarness, DaemonWorkspace) async throws -> Void
  ) async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.232.0.1/24", "dev", "veth0")
    try sandbox.ip("addr", "add", "10.232.0.2/24", "dev", "veth1")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.232.0.2", "dev", "veth0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(
      jobs: """
        [network]
        \(settings)

        """
          + daemonShellJob(
            id: Self.id,
            script: "echo \"$BACKGROUNDER_METERED\" >> \(workspace.file("side-effect"))",
            schedule: "once = true", extra: "network = \"\(network)\"\nbudget = \"8s\""))
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    try await body(harness, workspace)
  }

  @Test func dueUnmeteredJobWaitsWhileNetworkManagerSaysMeteredAtStart() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let device = try bus.addWifiDevice(interface: "veth0", metered: Self.guessYes)
    try await withDaemon(bus: bus) { harness, workspace in
      let held = try await harness.waitForTask(Self.id, "deferred: NetworkManager says metered") {
        $0.lastResult == "retry"
      }
      #expect(held.attempt == 0, "\(harness.describe())")
      #expect(workspace.lines(of: "side-effect").isEmpty, "ran on a metered link")
      // The daemon's view, not a second reading: this status cannot reach the private bus.
      let status = try await harness.status()
      #expect(status.raw.contains("\"networkmanager:guess-yes\""), "\(status.raw)")
      // `status --watch` too: its first line is the daemon's view.
      let watch = try DaemonChild(
        [
          "/usr/sbin/ip", "netns", "exec", harness.namespace ?? "", try DaemonBinary.path(),
          "status", "--watch", "--json", "--config", workspace.configPath,
        ],
        outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"))
      defer { watch.terminate() }
      let first = try await daemonEventually("the first watch line", describe: watch.errorOutput) {
        workspace.lines(of: "watch.out").first
      }
      #expect(first.contains("\"networkmanager:guess-yes\""), "\(first)")
      #expect(first.contains("\"running\":true"), "\(first)")

      try bus.setMetered(Self.notMetered, device: device)
      try await daemonEventually("the job ran", describe: harness.describe()) {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      _ = try await harness.waitForTask(Self.id, "succeeded") { $0.lastResult == "success" }
      #expect(workspace.lines(of: "side-effect") == ["0"], "ran once, told unmetered")
    }
  }

  @Test func departedNetworkManagerHoldsWorkUntilTheStaleLimit() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    try await withDaemon(bus: bus, settings: "stale-hints = \"4s\"") { harness, workspace in
      _ = try await harness.waitForTask(Self.id, "held: metered") { $0.lastResult == "retry" }
      // Taken before the stop: dbus-daemon may announce the departure before waitUntilExit
      // returns, and the limit runs from the daemon's notice.
      let left = Date()
      bus.stopNetworkManager()
      // Stale: the kernel's guess (veth: unmetered) must not release the job.
      let stale = try await daemonEventually("stale mark", describe: harness.describe()) {
        let status = try await harness.status()
        return status.raw.contains("\"stale\":true") ? status : nil
      }
      #expect(stale.raw.contains("\"state\":\"stale\""), "\(stale.raw)")
      if Date().timeIntervalSince(left) < 3 {
        #expect(workspace.lines(of: "side-effect").isEmpty, "released while the answer is stale")
      }
      // Past the limit: the kernel decides (unmetered), with a health problem.
      try await daemonEventually("the job ran", timeout: .seconds(30), describe: harness.describe())
      {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      #expect(Date().timeIntervalSince(left) >= 4, "ran before the stale limit")
      let after = try await harness.status()
      #expect(after.raw.contains("conditionSourceGone"), "\(after.raw)")
      #expect(workspace.lines(of: "side-effect") == ["0"])
    }
  }

  @Test func watchPrintsItsFirstLineOnlyOnceNetworkManagerAnswered() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.guessYes)
    bus.signalNetworkManager(SIGSTOP)  // on the bus, not answering yet
    defer { bus.signalNetworkManager(SIGCONT) }
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.233.0.1/24", "dev", "veth0")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.233.0.2", "dev", "veth0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: "")
    let watch = try DaemonChild(
      [
        "/usr/sbin/ip", "netns", "exec", sandbox.name, try DaemonBinary.path(), "status",
        "--watch", "--json", "--config", workspace.configPath,
      ],
      outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"),
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    defer { watch.terminate() }
    // Well within the 5 s source timeout: no line while NetworkManager has not answered.
    try await Task.sleep(for: .seconds(1))
    #expect(workspace.lines(of: "watch.out").isEmpty, "printed before NetworkManager answered")
    bus.signalNetworkManager(SIGCONT)
    let first = try await daemonEventually("the first line", describe: watch.errorOutput) {
      workspace.lines(of: "watch.out").first
    }
    #expect(first.contains("\"networkmanager:guess-yes\""), "\(first)")
    #expect(first.contains("\"metered\":true"), "\(first)")
  }

  @Test func readyOnlyOnceNetworkManagerAnsweredOrTimedOut() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    bus.signalNetworkManager(SIGSTOP)
    defer { bus.signalNetworkManager(SIGCONT) }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: "[network]\nsource-timeout = \"30s\"\n")
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    _ = try harness.startDaemon(
      environment: ["NOTIFY_SOCKET": notify.path, "DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    // The control socket listens and netlink answered long ago; NetworkManager has not.
    try await daemonEventually("the control socket", describe: harness.describe()) {
      FileManager.default.fileExists(atPath: workspace.socketPath) ? true : nil
    }
    try await Task.sleep(for: .seconds(1))
    #expect(notify.received("READY=1").isEmpty, "READY=1 before NetworkManager answered")
    let resumed = ContinuousClock.now
    bus.signalNetworkManager(SIGCONT)
    let ready = try await daemonEventually("READY=1", describe: harness.describe()) {
      notify.received("READY=1").first
    }
    #expect(ready.receivedAt >= resumed)
  }

  @Test func doctorWithoutADaemonNamesASilentNetworkManager() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: "[network]\nsource-timeout = \"1s\"\n")
    func doctor() async throws -> (status: Int32?, output: String) {
      let child = try DaemonChild(
        [try DaemonBinary.path(), "doctor", "--config", workspace.configPath],
        outputPath: workspace.file("doctor.out"),
        environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
      let status = await child.waitForExit(timeout: .seconds(30))
      return (status, child.output)
    }
    let answering = try await doctor()
    #expect(answering.output.contains("networkmanager: answers"), "\(answering.output)")
    bus.signalNetworkManager(SIGSTOP)
    defer { bus.signalNetworkManager(SIGCONT) }
    let silent = try await doctor()
    #expect(
      silent.output.contains("networkmanager: on the bus but did not answer within 1 s"),
      "\(silent.output)")
    #expect(silent.status == 1)
  }

  @Test func silentNetworkManagerIsBoundedByTheSourceTimeout() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    try bus.startNetworkManager()
    _ = try bus.addWifiDevice(interface: "veth0", metered: Self.metered)
    bus.signalNetworkManager(SIGSTOP)
    defer { bus.signalNetworkManager(SIGCONT) }
    let started = Date()
    try await withDaemon(bus: bus, network: "any", settings: "source-timeout = \"2s\"") {
      harness, workspace in
      try await daemonEventually("the job ran", timeout: .seconds(30), describe: harness.describe())
      {
        workspace.lines(of: "side-effect").isEmpty ? nil : true
      }
      #expect(Date().timeIntervalSince(started) >= 2, "ran before NetworkManager timed out")
      let status = try await harness.status()
      #expect(status.raw.contains("conditionSourceTimedOut"), "\(status.raw)")
      #expect(status.raw.contains("\"state\":\"timedOut\""), "\(status.raw)")
      // ModemManager is not on this bus: absent, although it is read in the same round as the
      // silent NetworkManager, whose read used up its whole timeout.
      #expect(!status.raw.contains("ModemManager is on the bus"), "\(status.raw)")
    }
  }
}
