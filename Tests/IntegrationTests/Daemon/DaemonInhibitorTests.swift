import Backgrounder
import BackgrounderDaemon
import BackgrounderLinux
import Foundation
import Locking
import Logging
import TestSupport
import Testing

/// Sleep inhibitors through python-dbusmock's logind on a private bus: a run holds a
/// `sleep` and a `shutdown` lock naming its job while it goes, in its job's mode, and releases it when
/// it ends; `inhibit = "none"` takes none; no logind, no lock and no failure.
@Suite(
  .blockingIO,
  .serialized,
  .enabled(if: LogindMock.isAvailable, "needs dbus-daemon, dbus-send and python3-dbusmock"),
  .timeLimit(.minutes(2)))
struct DaemonInhibitorTests {
  @Test func aRunHoldsALockNamingItsJobUntilItEnds() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    func job(_ id: String, _ name: String, _ extra: String) -> String {
      daemonShellJob(
        id: id,
        script: "touch \(workspace.file(name)); "
          + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
        schedule: "once = true", extra: extra)
    }
    try workspace.writeConfig(
      jobs: job("dev.e2e.held", "held", "inhibit = \"block\"")
        + job("dev.e2e.free", "free", "inhibit = \"none\""))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: setup.systemBus)
    try await daemonEventually("both runs to start", describe: harness.describe()) {
      FileManager.default.fileExists(atPath: workspace.file("held"))
        && FileManager.default.fileExists(atPath: workspace.file("free")) ? true : nil
    }
    // Both locks: the daemon takes the sleep lock and the shutdown lock one after the other, and
    // a list read between the two (it was, once, on a loaded machine) has only the first.
    let held = try await daemonEventually("the locks", describe: harness.describe()) {
      let list = try logind.inhibitors()
      return list.contains("\"running dev.e2e.held\"") && list.contains("\"sleep\"")
        && list.contains("\"shutdown\"") ? list : nil
    }
    // One lock for sleep and one for shutdown (logind checks a `sleep:shutdown` lock against
    // polkit's lid-switch action, refused to a user unit's daemon).
    #expect(held.contains("\"sleep\"") && held.contains("\"shutdown\""), "\(held)")
    #expect(!held.contains("sleep:shutdown") && held.contains("\"backgrounder\""), "\(held)")
    #expect(held.contains("\"block\""), "the job's mode: \(held)")
    #expect(!held.contains("dev.e2e.free"), "inhibit = \"none\" takes no lock: \(held)")

    // status says which run holds a lock, in which mode, and that logind gives them.
    let inhibitors = try await daemonEventually("status to show the lock") {
      let inhibitors = try await Self.statusInhibitors(harness)
      return inhibitors?.locks.first?.held == true ? inhibitors : nil
    }
    #expect(inhibitors.availability == "available")
    #expect(
      inhibitors.locks == [.init(job: "dev.e2e.held", mode: "block", held: true)],
      "the block lock only: inhibit = \"none\" shows none")
    let text = try await harness.cli("status", "--config", workspace.configPath).stdout
    #expect(text.contains("  inhibitors: available (systemd-logind)"), "\(text)")
    #expect(text.contains("  inhibitor: dev.e2e.held holds a block lock"), "\(text)")
    #expect(!text.contains("inhibitor: dev.e2e.free"), "\(text)")
    // Each task says whether its run holds one: `"inhibitor"` and `running (block lock)`.
    let tasks = try await Self.statusTasks(harness)
    #expect(tasks["dev.e2e.held"]?["inhibitor"] as? String == "block", "\(tasks)")
    #expect(tasks["dev.e2e.free"].map { $0["inhibitor"] == nil } == true, "\(tasks)")
    let heldRow = text.split(separator: "\n").first { $0.contains("dev.e2e.held  ") }
    #expect(heldRow?.contains("running (block lock)") == true, "\(text)")
    let freeRow = text.split(separator: "\n").first { $0.contains("dev.e2e.free  ") }
    #expect(freeRow.map { !$0.contains("lock)") } == true, "\(text)")

    try Data().write(to: URL(fileURLWithPath: workspace.file("release")))
    try await daemonEventually("the lock to be released", describe: harness.describe()) {
      try logind.inhibitors().contains("running") ? nil : true
    }
    _ = try await harness.waitForTask("dev.e2e.held", "finished") { $0.lastResult == "success" }
    let after = try await Self.statusInhibitors(harness)
    #expect(after?.locks == [], "no run, no lock: \(String(describing: after))")
  }

  /// The daemon asks logind for a run's locks when the run's start is confirmed
  /// (`holdingInhibitors(from: .confirmedStart)`): a run that gives its start back — here a
  /// `bandwidth-required` cap this daemon cannot enforce — asks for none. Before, it asked for
  /// both and dropped them at once: 4 `Inhibit` calls for the two runs instead of 2.
  @Test func aRunThatDeclinesItsStartAsksLogindForNoLock() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    let (declined, ran) = ("dev.e2e.declined", "dev.e2e.ran")
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: declined, script: "echo run >> \(workspace.file("declined"))",
        schedule: "once = true",
        extra: """
          bandwidth = "1Mbit"
          bandwidth-required = true
          backoff = { policy = "linear", initial = "1h" }
          """)
        + daemonShellJob(
          id: ran,
          script: "echo run >> \(workspace.file("ran")); "
            + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
          schedule: "once = true", extra: "delay = \"1h\""))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: setup.systemBus)
    let held = try await harness.waitForTask(declined, "the declined run") {
      $0.recentRuns.first?.outcome == "deferred"
    }
    #expect(workspace.lines(of: "declined").isEmpty, "\(held)")
    // Then a run that starts, held until both its locks are listed: its two, and no more.
    let trigger = try await harness.cli("trigger", ran, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually("the run's two locks", describe: harness.describe()) {
      try logind.inhibitors().components(separatedBy: "\"running \(ran)\"").count == 3
        ? true : nil
    }
    _ = FileManager.default.createFile(atPath: workspace.file("release"), contents: nil)
    _ = try await harness.waitForTask(ran, "the run") { $0.lastResult == "success" }
    #expect(workspace.lines(of: "ran") == ["run"])
    #expect(try logind.inhibitCalls() == 2, "the declined run asked for locks")
  }

  /// `status --json`'s `tasks`, by id.
  private static func statusTasks(_ harness: DaemonHarness) async throws -> [String: [String: Any]]
  {
    let raw = try await harness.status().raw
    let document = try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any]
    let tasks = document?["tasks"] as? [[String: Any]] ?? []
    return Dictionary(
      tasks.compactMap { task in (task["id"] as? String).map { ($0, task) } },
      uniquingKeysWith: { first, _ in first })
  }

  /// `status --json`'s `daemon.inhibitors`.
  private static func statusInhibitors(_ harness: DaemonHarness) async throws -> InhibitorsInfo? {
    struct Document: Decodable {
      struct Daemon: Decodable { var inhibitors: InhibitorsInfo? }
      var daemon: Daemon
    }
    let raw = try await harness.status().raw
    return try JSONDecoder().decode(Document.self, from: Data(raw.utf8)).daemon.inhibitors
  }

  @Test func sleepStopsDelayRunsAsRetryAndResumeRunsThemAgain() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    // Each run appends a line, then waits until released.
    func job(_ id: String, _ name: String, _ extra: String) -> String {
      daemonShellJob(
        id: id,
        script: "echo $BACKGROUNDER_ATTEMPT >> \(workspace.file(name)); "
          + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
        schedule: "once = true", extra: extra)
    }
    try workspace.writeConfig(
      jobs: job("dev.e2e.delay", "delay", "") + job("dev.e2e.block", "block", "inhibit = \"block\"")
    )
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(environment: setup.systemBus)
    // Both locks, and both commands started (a run stopped before its shell wrote its line,
    // on a loaded machine, left "delay" empty and the rerun's line the only one).
    try await daemonEventually("both locks and both runs", describe: harness.describe()) {
      let list = try logind.inhibitors()
      return list.contains("\"running dev.e2e.delay\"")
        && list.contains("\"running dev.e2e.block\"")
        && workspace.lines(of: "delay") == ["0"] && !workspace.lines(of: "block").isEmpty
        ? true : nil
    }

    try logind.emit("PrepareForSleep", true)
    let stopped = try await harness.waitForTask("dev.e2e.delay", "stopped for sleep") {
      $0.lastResult == "retry"
    }
    #expect(stopped.lastReason == "system suspending", "\(harness.describe())")
    #expect(stopped.attempt == 0, "no attempt used: \(harness.describe())")
    try await daemonEventually("the delay lock to go", describe: harness.describe()) {
      try logind.inhibitors().contains("dev.e2e.delay") ? nil : true
    }
    #expect(try logind.inhibitors().contains("\"running dev.e2e.block\""), "block keeps its lock")
    let block = try await harness.status().task("dev.e2e.block")
    #expect(block?.state == "running", "\(harness.describe())")
    #expect(workspace.lines(of: "delay") == ["0"], "nothing starts while the system sleeps")

    try logind.emit("PrepareForSleep", false)
    try await daemonEventually("the delay job to run again", describe: harness.describe()) {
      workspace.lines(of: "delay").count == 2 ? true : nil
    }
    #expect(workspace.lines(of: "delay") == ["0", "0"], "the same attempt again")
    try Data().write(to: URL(fileURLWithPath: workspace.file("release")))
    _ = try await harness.waitForTask("dev.e2e.delay", "finished") { $0.lastResult == "success" }
  }

  /// A run that ignores SIGTERM, a runner grace of 60 s, logind's delay 2 s: the run is killed
  /// within the delay (the 20 s waits for it to be gone fail with the runner's grace).
  @Test func aSleepStopKillsWithinLogindsDelay() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    try logind.setInhibitDelayMax(microseconds: 2_000_000)
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: "dev.e2e.stubborn",
        script: "trap '' TERM; echo $$ > \(workspace.file("pid")); "
          + "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
        schedule: "once = true"))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon(
      environment: setup.systemBus, arguments: ["--kill-grace", "60s"])
    try await daemonEventually("the lock", describe: harness.describe()) {
      try logind.inhibitors().contains("\"running dev.e2e.stubborn\"") ? true : nil
    }
    let pid = try await daemonEventually("the run's pid", describe: harness.describe()) {
      pid_t(workspace.lines(of: "pid").first ?? "")
    }

    try logind.emit("PrepareForSleep", true)
    let stopped = try await harness.waitForTask("dev.e2e.stubborn", "killed for sleep") {
      $0.lastResult == "retry"
    }
    #expect(stopped.lastReason == "system suspending", "\(harness.describe())")
    // The runtime abandons a worker after its own grace (10 s) and records the retry then:
    // the process being gone is what shows the kill.
    try await daemonEventually("the run's shell to be gone", describe: harness.describe()) {
      kill(pid, 0) != 0 ? true : nil
    }
    try await daemonEventually("the lock to go", describe: harness.describe()) {
      try logind.inhibitors().contains("dev.e2e.stubborn") ? nil : true
    }
  }

  @Test func doctorSaysWhetherLogindGivesLocks() async throws {
    let bus = try PrivateBus()
    defer { bus.close() }
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(
      jobs: daemonShellJob(id: "dev.e2e.doctor", script: "true", schedule: "once = true"))
    func doctor() async throws -> String {
      let child = try DaemonChild(
        [
          "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", try DaemonBinary.path(),
          "doctor", "--config", workspace.configPath,
        ], outputPath: workspace.file("doctor.out"), errorPath: workspace.file("doctor.err"))
      _ = await child.waitForExit(timeout: .seconds(30))
      return child.output + child.errorOutput
    }
    let absent = try await doctor()
    #expect(absent.contains("inhibitor: systemd-logind is not available"), "\(absent)")
    let logind = try LogindMock(bus: bus)
    defer { logind.stop() }
    let present = try await doctor()
    #expect(present.contains("ok: inhibitor: systemd-logind gives"), "\(present)")
  }

  /// The lock's mode is the request's ``InhibitPolicy`` (kept with the task in the store),
  /// not the job definition the request carries: a library user setting it gets the lock.
  @Test func theLockModeIsTheRequestsInhibitPolicy() async throws {
    let setup = try LogindDaemonSetup()
    defer { setup.remove() }
    let (logind, workspace) = (setup.logind, setup.workspace)
    let logger = Logger(label: "test.inhibitor")
    let sources = LinuxConditionSources(
      options: .init(
        sysfsRoot: "/nonexistent", watchesUserIdle: false, logindBusAddress: setup.bus.address),
      logger: logger)
    let backgrounder = Backgrounder(storePath: workspace.file("store.sqlite"))
    // As the daemon registers it.
    try backgrounder.registerFallback(
      sources.holdingInhibitors(from: .confirmedStart) { _ in
        CommandWorker(runner: CommandRunner(logger: logger))
      })
    try await backgrounder.start()
    // No `inhibit` in the definition: on its own it would take a delay lock.
    let job = JobDefinition(
      id: "dev.e2e.request",
      command: [
        "/bin/sh", "-c", "while [ ! -e \(workspace.file("release")) ]; do sleep 0.05; done",
      ],
      schedule: .once(delay: .zero))
    guard case .oneTime(var request) = try JobRequests.request(for: job, origin: .cli) else {
      Issue.record("a once job gives a one-time request")
      return
    }
    #expect(request.inhibitPolicy == .delay)
    request.inhibitPolicy = .block
    #expect(await backgrounder.schedule(request) == .scheduled)
    let list = try await daemonEventually("the lock") {
      let list = try logind.inhibitors()
      return list.contains("\"running dev.e2e.request\"") ? list : nil
    }
    #expect(list.contains("\"block\""), "the request's mode: \(list)")
    #expect(!list.contains("\"delay\""), "\(list)")
    try Data().write(to: URL(fileURLWithPath: workspace.file("release")))
    try await daemonEventually("the lock to go") {
      try logind.inhibitors().contains("dev.e2e.request") ? nil : true
    }
    await backgrounder.shutdown()
  }
}
