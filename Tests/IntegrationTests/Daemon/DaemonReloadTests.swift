import Foundation
import TestSupport
import Testing

/// SIGHUP makes the real daemon re-read its config; a broken file changes nothing.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
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

  /// Issue #34: `[network]` changed and reloaded. The metered overrides apply at once: a held
  /// `unmetered` job runs under the new rule and `status` agrees with the daemon. A key the
  /// running sources cannot take (`stale-hints`) makes the reload say a restart is needed
  /// (journal, health: `status` and `doctor`) instead of printing the file's answer; the file
  /// put back clears it.
  @Test(
    "[network] reload: metered globs applied live (held job runs); other keys: restart needed",
    .enabled(if: getuid() == 0, "needs root to create network namespaces"))
  func networkReload() async throws {
    let sandbox = try NamespaceSandbox.create(prefix: "view")
    defer { sandbox.remove() }
    try sandbox.ip("addr", "add", "10.232.0.1/24", "dev", "veth0")
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("route", "add", "default", "via", "10.232.0.2", "dev", "veth0")
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let held = "dev.e2e.unmetered"
    func write(metered: String, staleHints: String = "2m") throws {
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
        stale-hints = "\(staleHints)"

        """
          + daemonShellJob(
            id: held,
            script: "echo \"$BACKGROUNDER_PRIMARY_LINK $BACKGROUNDER_METERED\" >> "
              + workspace.file(held),
            schedule: "once = true", extra: "network = \"unmetered\""))
    }
    func status() async throws -> String {
      let result = try await harness.cli("status", "--config", workspace.configPath)
      harness.record(result.stdout)
      return result.stdout
    }
    try write(metered: "\"veth*\"")
    let daemon = try harness.startDaemon()
    // Held by the old rule: veth0 is metered.
    _ = try await harness.waitForTask(held, "held for an unmetered network") {
      $0.predicateKinds.contains("networkRequired")
    }
    let before = try await status()
    #expect(before.contains("Metered: yes"), "\(before)")
    #expect(!before.contains("restart needed"), "\(before)")
    #expect(!before.contains("the daemon's view"), "same namespace, same view: \(before)")
    #expect(workspace.lines(of: held).isEmpty, "ran on a metered link")

    try write(metered: "\"bgzz*\"")
    daemon.signal(SIGHUP)
    // The new rule decides: the job runs, on veth0 unmetered.
    try await daemonEventually("the held job to run after the reload", describe: harness.describe())
    {
      workspace.lines(of: held).isEmpty ? nil : true
    }
    #expect(workspace.lines(of: held) == ["veth0 0"], "\(harness.describe())")
    #expect(daemon.output.contains("[network] metered applied at reload"), "\(daemon.output)")
    let after = try await status()
    #expect(after.contains("Metered: no"), "\(after)")
    #expect(!after.contains("restart needed"), "applied, nothing to restart for: \(after)")

    // A key the running sources cannot take: restart needed, named in the journal.
    try write(metered: "\"bgzz*\"", staleHints: "3m")
    daemon.signal(SIGHUP)
    try await daemonEventually("the restart notice in the log", describe: harness.describe()) {
      daemon.output.contains("config changed, restart needed: [network] stale-hints") ? true : nil
    }
    let unapplied = try await status()
    #expect(unapplied.contains("Metered: config changed, restart needed"), "\(unapplied)")
    let json = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(json.stdout.contains("\"configRestartNeeded\""), "\(json.stdout)")
    #expect(json.stdout.contains("\"viewOf\":\"client\""), "\(json.stdout)")
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
