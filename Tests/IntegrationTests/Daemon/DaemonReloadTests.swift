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
}
