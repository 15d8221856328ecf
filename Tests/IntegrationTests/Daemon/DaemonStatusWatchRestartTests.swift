import Foundation
import TestSupport
import Testing

/// `status --watch` across a daemon restart (issue #34): it says the daemon stopped, keeps
/// going, reconnects when the socket answers again, prints the runs it did not see (the new
/// daemon's first run happens at its start, before any client can connect) and follows the new
/// daemon's task changes.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonStatusWatchRestartTests {
  @Test("status --watch: daemon stopped, answers again, the run in between, then live changes")
  func watchFollowsARestart() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let before = "dev.e2e.before"
    let caughtUp = "dev.e2e.caught-up"
    func job(_ id: String) -> String {
      daemonShellJob(
        id: id, script: "echo run >> \(workspace.file(id))", schedule: "every = \"1h\"")
    }
    try workspace.writeConfig(jobs: job(before))
    let first = try harness.startDaemon()
    _ = try await harness.waitForTask(before, "the first run") { $0.lastResult == "success" }
    let watch = try DaemonChild(
      [harness.binary, "status", "--watch", "--config", workspace.configPath],
      outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"))
    defer { watch.terminate() }
    func watched() -> String { watch.output + "\n-- stderr:\n" + watch.errorOutput }
    try await daemonEventually("the first watch line", describe: watched()) {
      watch.output.contains(" | power: ") ? true : nil
    }

    first.signal(SIGTERM)
    #expect(await first.waitForExit(timeout: .seconds(30)) != nil)
    try await daemonEventually("the stop line", describe: watched()) {
      watch.output.contains("daemon stopped") ? true : nil
    }
    #expect(watch.isRunning, "\(watched())")

    try workspace.writeConfig(jobs: job(before) + job(caughtUp))
    _ = try harness.startDaemon()
    _ = try await harness.waitForTask(caughtUp, "the new job's run at start") {
      $0.lastResult == "success"
    }
    try await daemonEventually("the reconnection and the run", describe: watched()) {
      let output = watch.output
      return output.contains("daemon answers again")
        && output.contains("task \(caughtUp) finished") ? true : nil
    }
    let trigger = try await harness.cli("trigger", before, "--config", workspace.configPath)
    #expect(trigger.status == 0, "\(trigger)")
    try await daemonEventually("a live task change from the new daemon", describe: watched()) {
      watch.output.contains("task \(before) started") ? true : nil
    }
    #expect(watch.isRunning, "\(watched())")
  }
}
