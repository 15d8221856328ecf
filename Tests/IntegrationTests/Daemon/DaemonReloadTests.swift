import Foundation
import Testing

/// SIGHUP makes the real daemon re-read its config; a broken file changes nothing.
@Suite(.timeLimit(.minutes(2)))
struct DaemonReloadTests {
  @Test("SIGHUP: an added job is scheduled, a removed one cancelled; a broken config keeps them")
  func reload() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let kept = "dev.e2e.kept"
    let removed = "dev.e2e.removed"
    let added = "dev.e2e.added"
    func job(_ id: String) -> String {
      daemonShellJob(
        id: id, script: "echo run >> \(workspace.file(id))", schedule: "every = \"1h\"")
    }
    try workspace.writeConfig(jobs: job(kept) + job(removed))
    let daemon = try harness.startDaemon()
    for id in [kept, removed] {
      _ = try await harness.waitForTask(id, "the first run") { $0.lastResult == "success" }
    }
    let keptBefore = try #require(try await harness.status().task(kept))

    try workspace.writeConfig(jobs: job(kept) + job(added))
    daemon.signal(SIGHUP)
    let addedRun = try await harness.waitForTask(added, "the added job to run") {
      $0.lastResult == "success"
    }
    #expect(addedRun.kind == "periodic")
    try await daemonEventually("the removed job to leave status", describe: harness.describe()) {
      try await harness.status().task(removed) == nil ? true : nil
    }
    let keptAfter = try #require(try await harness.status().task(kept), "\(harness.describe())")
    #expect(
      keptAfter.nextRun == keptBefore.nextRun
        && keptAfter.recentRuns.count == keptBefore.recentRuns.count,
      "an unchanged job keeps its schedule: \(harness.describe())")
    #expect(workspace.lines(of: kept).count == 1 && workspace.lines(of: removed).count == 1)

    try workspace.writeRawConfig("[store]\npath = 42\n[[job]]\nid = \"broken\"\n")
    daemon.signal(SIGHUP)
    try await daemonEventually("the failed reload in the log", describe: harness.describe()) {
      daemon.output.contains("config reload failed") ? true : nil
    }
    #expect(daemon.isRunning, "a broken config must not stop the daemon")
    // Verbs load the config too: they fail with the file, line and key.
    let refused = try await harness.cli("trigger", kept, "--config", workspace.configPath)
    #expect(
      refused.status != 0 && refused.stderr.contains("config.toml:2: store.path"), "\(refused)")
    // Put the good file back without SIGHUP: the daemon must still hold the jobs it had, and it
    // still serves the control socket.
    try workspace.writeConfig(jobs: job(kept) + job(added))
    let afterBroken = try await harness.status()
    #expect(afterBroken.task(kept) != nil && afterBroken.task(added) != nil, "\(afterBroken.raw)")
    #expect(
      afterBroken.task(kept)?.nextRun == keptBefore.nextRun, "\(harness.describe())")
    let trigger = try await harness.cli("trigger", kept, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually("the triggered run of the kept job", describe: harness.describe()) {
      workspace.lines(of: kept).count == 2 ? true : nil
    }
  }

  /// Issue #34: `[network]` changed and reloaded. The sources keep the settings they started
  /// with, so the reload says a restart is needed (journal, health: `status` and `doctor`), and
  /// `status` prints that instead of the file's new metered answer; the file put back clears it.
  @Test(
    "[network] changed + SIGHUP: restart needed in log, status, doctor; the daemon's view elsewhere",
    .enabled(if: getuid() == 0, "needs root to create network namespaces"))
  func networkChangeNeedsRestart() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.232.0.1/24", "dev", "veth0")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.232.0.2", "dev", "veth0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    func write(metered: String) throws {
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(workspace.socketPath)"
        [network]
        metered = [\(metered)]
        networkmanager = false
        modemmanager = false

        """)
    }
    func status() async throws -> String {
      let result = try await harness.cli("status", "--config", workspace.configPath)
      harness.record(result.stdout)
      return result.stdout
    }
    try write(metered: "\"bgzz*\"")
    let daemon = try harness.startDaemon()
    try await daemonEventually("the daemon to answer", describe: harness.describe()) {
      try await status().contains("Daemon: running") ? true : nil
    }
    let before = try await status()
    #expect(before.contains("Metered: no"), "\(before)")
    #expect(!before.contains("restart needed"), "\(before)")
    #expect(!before.contains("the daemon's view"), "same namespace, same view: \(before)")

    // Asked from another network namespace (this process's), status shows the daemon's view,
    // labelled as such, not its own uplink.
    func outside(_ arguments: String...) async throws -> String {
      let name = "outside-\(UUID().uuidString)"
      let child = try DaemonChild(
        [harness.binary] + arguments + ["--config", workspace.configPath],
        outputPath: workspace.file(name + ".out"), errorPath: workspace.file(name + ".err"))
      _ = await child.waitForExit(timeout: .seconds(60))
      return child.output
    }
    let elsewhere = try await outside("status")
    #expect(
      elsewhere.contains("Network (the daemon's view in net:[")
        && elsewhere.contains("reachable via veth0") && elsewhere.contains("Metered: no"),
      "\(elsewhere)")
    let elsewhereJSON = try await outside("status", "--json")
    #expect(elsewhereJSON.contains("\"primaryLink\":\"veth0\""), "\(elsewhereJSON)")

    try write(metered: "\"veth*\"")
    daemon.signal(SIGHUP)
    try await daemonEventually("the restart notice in the log", describe: harness.describe()) {
      daemon.output.contains("config changed, restart needed: [network] metered") ? true : nil
    }
    let after = try await status()
    #expect(after.contains("Metered: config changed, restart needed"), "\(after)")
    #expect(!after.contains("Metered: yes"), "the file's answer is not the daemon's: \(after)")
    let json = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(json.stdout.contains("\"configRestartNeeded\""), "\(json.stdout)")
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(doctor.stdout.contains("config changed, restart needed"), "\(doctor)")

    try write(metered: "\"bgzz*\"")
    daemon.signal(SIGHUP)
    try await daemonEventually("the notice to clear", describe: harness.describe()) {
      let text = try await status()
      return !text.contains("restart needed") && text.contains("Metered: no") ? true : nil
    }
    #expect(daemon.isRunning)
  }
}
