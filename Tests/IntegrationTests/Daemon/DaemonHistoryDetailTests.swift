import Foundation
import TestSupport
import Testing

/// `history` shows the conditions a run started under and the tail of its output: the real
/// daemon runs a command that prints known lines into a real store.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonHistoryDetailTests {
  @Test("history shows each run's start conditions and output tail")
  func conditionsAndOutputTail() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    let id = "dev.e2e.detail"
    // 25 lines: the tail keeps the last 20.
    try workspace.writeConfig(
      jobs: daemonShellJob(
        id: id, script: "for i in $(seq 1 25); do echo line $i; done", schedule: "once = true"))
    let config = workspace.configPath
    _ = try harness.startDaemon()
    _ = try await harness.waitForTask(id, "the run to succeed") { $0.lastResult == "success" }

    let result = try await harness.cli("history", id, "--json", "--config", config)
    #expect(result.status == 0, "\(result)")
    let document = try JSONDecoder().decode(DaemonHistory.self, from: Data(result.stdout.utf8))
    let run = try #require(document.runs.first)
    #expect(run.outcome == "success")
    #expect(run.outputTail == (6...25).map { "line \($0)" }.joined(separator: "\n"), "\(run)")
    let conditions = try #require(run.conditions, "\(result.stdout)")
    #expect(
      ["; charging", "; on battery", "; power unknown"].contains { conditions.contains($0) },
      "\(conditions)")
    #expect(result.stdout.contains("\"conditions\""), "the key is there")

    let human = try await harness.cli("history", id, "--config", config)
    #expect(human.stdout.contains("    started under: \(conditions)"), "\(human)")
    #expect(human.stdout.contains("    output:\n      line 6\n"), "\(human)")
    #expect(human.stdout.contains("      line 25"), "\(human)")
    // Start and end, and how long, in the one human format.
    #expect(human.stdout.contains(" → "), "\(human)")
    #expect(!human.stdout.contains("seconds"), "\(human)")

    // Without a systemd journal, logs prints the output the store keeps.
    if !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket") {
      let logs = try await harness.cli("logs", id, "--config", config)
      #expect(logs.status == 0, "\(logs)")
      #expect(logs.stderr.contains("no systemd journal"), "\(logs)")
      #expect(logs.stdout.contains("line 6\n"), "\(logs)")
      #expect(logs.stdout.hasSuffix("line 25\n"), "\(logs)")
    }
  }

}
