import Foundation
import GRDB
import TestSupport
import Testing

/// Text from the store reaches the terminal escaped: a store edited to hold terminal escapes
/// (OSC 52 writes the clipboard, CSI clears the screen, an 8-bit C1 CSI) in a run's reason, its
/// output and the task's last result is printed by `history` and `status` with every control
/// character as a visible `\xNN`, never raw; `--json` keeps the text, JSON-escaped (C1 and
/// bidirectional controls too).
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonOutputEscapingTests {
  static let hostile = "\u{1B}]52;c;aGFja2Vk\u{07}\u{1B}[2J\u{9B}31m boom\u{202E}txt"

  @Test func historyAndStatusPrintNoRawControlCharacters() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let job = "dev.e2e.hostile"
    try workspace.writeConfig(
      jobs: daemonShellJob(id: job, script: "echo fine; exit 3", schedule: "once = true"))
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    _ = try harness.startDaemon()
    _ = try await harness.waitForTask(job, "the run to fail") { $0.lastResult == "failure" }

    let store = try DatabaseQueue(path: workspace.storePath)
    try await store.write { db in
      try db.execute(
        sql: "UPDATE run SET reason = ?, outputTail = ?, conditions = ? WHERE taskId = ?",
        arguments: [Self.hostile, "line\n" + Self.hostile, Self.hostile, job])
      try db.execute(
        sql: "UPDATE task SET lastReason = ? WHERE id = ?", arguments: [Self.hostile, job])
    }
    try store.close()

    let history = try await harness.cli("history", job, "--config", workspace.configPath)
    #expect(history.status == 0, "\(history)")
    let status = try await harness.cli("status", "--config", workspace.configPath)
    #expect(status.status == 0, "\(status)")
    for (verb, output) in [("history", history.stdout), ("status", status.stdout)] {
      let controls = output.unicodeScalars.filter {
        ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}"
      }
      #expect(controls.isEmpty, "\(verb) printed raw controls: \(controls.map(\.value))")
      #expect(
        output.contains("\\x1b]52;c;aGFja2Vk\\x07\\x1b[2J\\x9b31m boom"), "\(verb): \(output)")
    }
    #expect(history.stdout.contains("\\u{202E}txt"), "\(history.stdout)")

    let json = try await harness.cli("history", job, "--json", "--config", workspace.configPath)
    let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    let runs = document?["runs"] as? [[String: Any]]
    #expect(runs?.first?["reason"] as? String == Self.hostile, "\(json.stdout)")
    // The JSON encoder escapes C0 only; the 8-bit CSI and the bidirectional override must not
    // reach the terminal raw either.
    let statusJSON = try await harness.cli("status", "--json", "--config", workspace.configPath)
    for (verb, output) in [("history --json", json.stdout), ("status --json", statusJSON.stdout)] {
      let controls = output.unicodeScalars.filter {
        ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}"
      }
      #expect(controls.isEmpty, "\(verb) printed raw controls: \(controls.map(\.value))")
      #expect(output.contains(#"\u009b31m boom\u202etxt"#), "\(verb): \(output)")
    }
  }

  /// An error quoting outside text (here a store path) is escaped on stderr too.
  @Test func errorsPrintNoRawControlCharacters() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    let store = workspace.file("gone\u{1B}]52;c;aGk=\u{07}.sqlite")
    let result = try await harness.cli("history", "dev.e2e.none", "--store", store)
    #expect(result.status != 0, "\(result)")
    #expect(!result.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    #expect(result.stderr.contains("gone\\x1b]52;c;aGk=\\x07.sqlite"), "\(result.stderr)")
  }
}
