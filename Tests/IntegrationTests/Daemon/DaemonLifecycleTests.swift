import Foundation
import TestSupport
import Testing

/// The real daemon's start-up, readiness and watchdog as systemd sees them (a notify socket
/// the test listens on), and the operator verbs' smaller promises.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonLifecycleTests {
  @Test("an unbindable control socket: exit ≠ 0, an error naming the socket, no READY=1")
  func unbindableSocketFailsBeforeReady() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    let socket = workspace.file(String(repeating: "s", count: 110) + ".sock")
    try workspace.writeRawConfig(
      """
      [store]
      path = "\(workspace.storePath)"
      [control]
      socket = "\(socket)"
      """)
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(doctor.status != 0, "doctor sees what run would fail on: \(doctor)")
    #expect(doctor.stdout.contains("problem: control socket:"), "\(doctor)")

    let daemon = try harness.startDaemon(environment: ["NOTIFY_SOCKET": notify.path])
    let status = await daemon.waitForExit(timeout: testEventTimeout)
    #expect(status != nil && status != 0, "exit status \(String(describing: status))")
    #expect(daemon.output.contains("socket"), "\(daemon.output)")
    #expect(notify.received("READY=1").isEmpty, "\(notify.received.map(\.text))")
    #expect(!daemon.output.contains("daemon ready"), "\(daemon.output)")
  }

  @Test("an unusable store: exit ≠ 0, an error naming the store, no READY=1")
  func unusableStoreFailsBeforeReady() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    try FileManager.default.createDirectory(
      atPath: workspace.storePath, withIntermediateDirectories: false)
    try workspace.writeConfig(jobs: "")
    let daemon = try harness.startDaemon(environment: ["NOTIFY_SOCKET": notify.path])
    let status = await daemon.waitForExit(timeout: testEventTimeout)
    #expect(status != nil && status != 0, "exit status \(String(describing: status))")
    #expect(daemon.output.contains("Error: store: "), "\(daemon.output)")
    #expect(daemon.output.contains(workspace.storePath), "\(daemon.output)")
    #expect(notify.received("READY=1").isEmpty, "\(notify.received.map(\.text))")
  }

  @Test("READY=1 comes once the control socket listens and the network state is known")
  func readyAfterSocketAndNetwork() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let notify = try NotifySocketListener(directory: workspace.directory)
    defer { notify.stop() }
    try workspace.writeConfig(jobs: "")
    let daemon = try harness.startDaemon(environment: ["NOTIFY_SOCKET": notify.path])
    try await daemonEventually("READY=1", describe: harness.describe()) {
      notify.received("READY=1").first
    }
    #expect(FileManager.default.fileExists(atPath: workspace.socketPath))
    let log = daemon.output
    let listening = try #require(log.range(of: "control socket ready"), "\(log)")
    let ready = try #require(log.range(of: "daemon ready"), "\(log)")
    #expect(listening.upperBound <= ready.lowerBound, "\(log)")
    let trigger = try await harness.cli("trigger", "dev.e2e.none", "--config", workspace.configPath)
    #expect(trigger.stderr.contains("no such job"), "the daemon answers at once: \(trigger)")

    daemon.signal(SIGTERM)
    #expect(await daemon.waitForExit(timeout: testEventTimeout) == 0, "\(daemon.output)")
    #expect(!notify.received("STOPPING=1").isEmpty)
  }

  @Test("WATCHDOG=1 keeps coming while the dispatch loop is idle and stops when it stalls")
  func watchdogFollowsTheDispatchLoop() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(jobs: "")

    /// The daemon's pings in the 1.2 s that start `skip` after `anchor` (a moment `anchor` finds
    /// in the running daemon); `binary` replaces `backgrounder`.
    func pings(
      binary: String? = nil, skip: Duration,
      after anchor: (NotifySocketListener, DaemonChild) async throws -> ContinuousClock.Instant
    ) async throws -> Int {
      let notify = try NotifySocketListener(directory: workspace.directory)
      defer { notify.stop() }
      let environment = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"]
      let daemon = try harness.startDaemon(environment: environment, binary: binary)
      defer { daemon.terminate() }
      let start = try await anchor(notify, daemon)
      try await Task.sleep(until: start.advanced(by: skip + .milliseconds(1200)))
      // Pings that stop because the daemon died would prove nothing.
      #expect(daemon.isRunning, "the daemon exited: \(daemon.output)")
      return notify.received("WATCHDOG=1").count { start.duration(to: $0.receivedAt) > skip }
    }

    // Idle: from 600 ms after `READY=1`.
    let idle = try await pings(skip: .milliseconds(600)) { notify, _ in
      try await daemonEventually("READY=1", describe: harness.describe()) {
        notify.received("READY=1").first
      }.receivedAt
    }
    #expect(idle >= 5, "an idle daemon pings every 100 ms: \(idle) pings in 1.2 s")
    // Stalled right after `READY=1` (the daemon with that test hook, `Tests/StallingDaemon`):
    // from 400 ms (two watchdog periods) after the test saw the stall logged. Anchored on the
    // stall, not on `READY=1`, so that a daemon slow to reach the stall on a busy machine does
    // not count as one that kept pinging.
    let stalling = try DaemonBinary.path(named: "StallingDaemon")
    let stalled = try await pings(binary: stalling, skip: .milliseconds(400)) { _, daemon in
      try await daemonEventually(
        "the stall", interval: .milliseconds(20), describe: harness.describe()
      ) { daemon.output.contains("the dispatch loop is blocked") ? ContinuousClock.now : nil }
    }
    #expect(stalled == 0, "no ping once the stalled loop is noticed: \(stalled) pings in 1.2 s")
  }

  @Test("trigger runs a finished one-time job once more")
  func triggerFinishedOneTimeJob() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.once-again"
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "echo ran >> \(workspace.file("once"))", schedule: "once = true"))
    _ = try harness.startDaemon()
    _ = try await harness.waitForTask(id, "the one-time job to finish") { $0.state == "succeeded" }
    let trigger = try await harness.cli("trigger", id, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    #expect(trigger.stdout.contains("once more"), "\(trigger)")
    try await daemonEventually("the second run", describe: harness.describe()) {
      workspace.lines(of: "once").count == 2 ? true : nil
    }
    _ = try await harness.waitForTask(id, "finished again") { $0.state == "succeeded" }
    #expect(workspace.lines(of: "once") == ["ran", "ran"])
  }

  @Test(
    "expire is recorded as the operator's, and a reload that changes `every` moves the next run")
  func expireReasonAndReloadedPeriod() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let long = "dev.e2e.expire"
    let periodic = "dev.e2e.period"
    let pidFile = workspace.file("long.pid")
    let longJob = daemonShellJob(
      id: long, script: "echo $$ > \(pidFile); exec sleep 60", schedule: "once = true",
      extra: "budget = \"1h\"\nbackoff = { initial = \"5h\" }")
    try workspace.writeConfig(
      jobs: longJob
        + daemonShellJob(id: periodic, script: "true", schedule: "every = \"1d\""))
    let daemon = try harness.startDaemon()
    let group = try await daemonEventually("the long job to start", describe: harness.describe()) {
      workspace.lines(of: "long.pid").first.flatMap { Int32($0) }
    }
    harness.adoptJobGroup(group)
    _ = try await harness.waitForTask(long, "running") { $0.state == "running" }
    let expire = try await harness.cli("expire", long, "--config", workspace.configPath)
    #expect(expire.status == 0, "\(expire)")
    let expired = try await harness.waitForTask(long, "the expiry recorded") {
      $0.lastResult == "retry"
    }
    #expect(expired.lastReason == "expired on request by the operator", "\(harness.describe())")
    #expect(expired.recentRuns.first?.outcome == "expired")

    let first = try await harness.waitForTask(periodic, "the first cycle") {
      $0.lastResult == "success"
    }
    let daily = try #require(first.nextRunDate)
    #expect(daily.timeIntervalSinceNow > 23 * 3600, "\(daily)")
    try workspace.writeConfig(
      jobs: longJob
        + daemonShellJob(id: periodic, script: "true", schedule: "every = \"2h\""))
    daemon.signal(SIGHUP)
    let reloaded = try await harness.waitForTask(periodic, "the next run moved") {
      ($0.nextRunDate?.timeIntervalSinceNow ?? .infinity) < 3 * 3600
    }
    let next = try #require(reloaded.nextRunDate)
    #expect(abs(next.timeIntervalSince(daily) + 22 * 3600) < 1, "cycle start + 2h: \(next)")
  }

  @Test("verbs explain bad input: too-large durations, non-ASCII ids, capture's path")
  func badInputIsExplained() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(jobs: "")
    let config = workspace.configPath

    let huge = try await harness.cli(
      "schedule", "dev.e2e.huge", "--every", "999999999999d", "--config", config, "--command",
      "/bin/true")
    #expect(huge.status != 0 && huge.stderr.contains("too large"), "\(huge)")

    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: "dev.e2e.hugecfg", script: "true", schedule: "every = \"999999999999d\""))
    let doctor = try await harness.cli("doctor", "--config", config)
    #expect(doctor.status != 0 && doctor.stdout.contains("too large"), "\(doctor)")
    try workspace.writeConfig(jobs: "")

    let accented = try await harness.cli("cancel", "dév.example", "--config", config)
    #expect(accented.status != 0 && accented.stderr.contains("'é' (U+00E9)"), "\(accented)")

    let pcap = workspace.file("missing/capture.pcap")
    let capture = try await harness.cli("capture", "--output", pcap, "--duration", "1s")
    #expect(capture.status != 0 && capture.stderr.contains(pcap), "\(capture)")
    let bare = try await harness.cli("capture", "--output", pcap, "--duration", "5")
    #expect(bare.status != 0 && bare.stderr.contains("invalid duration \"5\""), "\(bare)")
  }

  @Test("status prints interface names with control characters escaped")
  func statusEscapesInterfaceNames() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let name = "x\u{1B}[31my"
    try sandbox.ip("link", "add", name, "type", "veth", "peer", "name", "peer0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    try workspace.writeConfig(jobs: "")
    let status = try await harness.cli("status", "--config", workspace.configPath)
    #expect(status.status == 0, "\(status)")
    #expect(status.stdout.contains("x\\x1b[31my"), "\(status)")
    #expect(!status.stdout.contains("\u{1B}"), "no raw escape character: \(status)")
  }
}
