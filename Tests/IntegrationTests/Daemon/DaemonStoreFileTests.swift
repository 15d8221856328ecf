import Foundation
import Testing

extension DaemonHardeningTests {
  /// Who gets the store file, with the real binary: a daemon starting while offline edits run
  /// back to back, and a store file deleted or replaced under a running daemon.
  @Suite(.timeLimit(.minutes(3)))
  struct DaemonStoreFileTests {
    @Test("a daemon starting during back-to-back offline edits gets the store; no edit is lost")
    func daemonStartRacesOfflineEdits() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      try workspace.writeConfig(jobs: "")
      // Six loops of `schedule` with no pause: their offline edits hold the store lock shared
      // back to back, so before the fix a starting daemon never found it free and gave up.
      // Each loop records "ID STATUS" per command; all stop when the file `stop` exists, each
      // leaving `done-K`. (No `wait`: the shell inherits a blocked SIGCHLD from the test.)
      let script = """
        for k in 0 1 2 3 4 5; do
          ( i=0; while [ ! -e "$2/stop" ]; do
              "$0" schedule dev.race.$k-$i --once --delay 1h --config "$1" \\
                --command /bin/true >> "$2/schedule-$k.log" 2>&1
              echo "dev.race.$k-$i $?" >> "$2/statuses"; i=$((i+1))
            done; : > "$2/done-$k" ) &
        done
        """
      let loops = try DaemonChild(
        ["/bin/sh", "-c", script, harness.binary, workspace.configPath, workspace.directory],
        outputPath: workspace.file("loops.log"))
      defer {
        _ = FileManager.default.createFile(atPath: workspace.file("stop"), contents: nil)
        loops.terminate()
      }
      try await daemonEventually("12 offline edits", timeout: .seconds(60)) {
        workspace.lines(of: "statuses").count >= 12 ? true : nil
      }
      let daemon = try harness.startDaemon()
      try await daemonEventually(
        "the daemon to serve the store", timeout: .seconds(60), describe: harness.describe()
      ) {
        guard daemon.isRunning else {
          throw DaemonHarnessError("the daemon exited: \(harness.describe())")
        }
        return try await DaemonStoreTests.daemonSection(harness).running ? true : nil
      }
      // A few more edits, now through the daemon, then stop the loops.
      let served = workspace.lines(of: "statuses").count
      try await daemonEventually("5 edits through the daemon", timeout: .seconds(60)) {
        workspace.lines(of: "statuses").count >= served + 5 ? true : nil
      }
      _ = FileManager.default.createFile(atPath: workspace.file("stop"), contents: nil)
      try await daemonEventually("the loops to stop", timeout: .seconds(60)) {
        (0..<6).allSatisfy { FileManager.default.fileExists(atPath: workspace.file("done-\($0)")) }
          ? true : nil
      }

      let results = workspace.lines(of: "statuses").map { $0.split(separator: " ") }
      let failed = results.filter { $0.last != "0" }
      let example = (0..<6).flatMap { workspace.lines(of: "schedule-\($0).log") }
        .first { $0.lowercased().contains("error") }
      #expect(failed.isEmpty, "\(failed.count) of \(results.count) failed, e.g. \(example ?? "")")
      let stored = Set(try await harness.status().tasks?.map(\.id) ?? [])
      let accepted = Set(results.filter { $0.last == "0" }.map { String($0[0]) })
      #expect(accepted.subtracting(stored).isEmpty, "accepted but not stored")
      #expect(!daemon.output.contains("another backgrounder daemon"), "\(daemon.output)")
    }

    @Test("a store file replaced under a running daemon: work refused, exit ≠ 0, old file intact")
    func storeReplacedWhileRunning() async throws {
      let workspace = try DaemonWorkspace()
      defer { workspace.remove() }
      let harness = try DaemonHarness(workspace: workspace)
      defer { harness.cleanUp() }
      try workspace.writeConfig(jobs: "")
      let daemon = try harness.startDaemon()
      try await daemonEventually("the daemon", describe: harness.describe()) {
        try await DaemonStoreTests.daemonSection(harness).running ? true : nil
      }
      let before = try await harness.cli(
        "schedule", "dev.before", "--once", "--delay", "1h", "--config", workspace.configPath,
        "--command", "/bin/true")
      #expect(before.status == 0, "\(before)")

      // The open file moves away; garbage takes its name (as a restore gone wrong would).
      let moved = workspace.storePath + ".moved"
      try FileManager.default.moveItem(atPath: workspace.storePath, toPath: moved)
      let garbage = workspace.storePath + ".garbage"
      try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: garbage))
      #expect(rename(garbage, workspace.storePath) == 0)

      let after = try await harness.cli(
        "schedule", "dev.after", "--once", "--delay", "1h", "--config", workspace.configPath,
        "--command", "/bin/true")
      #expect(after.status == 1, "\(after)")
      #expect(after.stderr.contains("replaced by another file"), "\(after)")
      let status = await daemon.waitForExit(timeout: .seconds(30))
      #expect(status != nil && status != 0, "\(daemon.output)")
      #expect(
        daemon.output.contains("\(workspace.storePath) was replaced by another file"),
        "\(daemon.output)")

      // What the daemon accepted is in the file it had open; what it refused is nowhere.
      #expect(rename(moved, workspace.storePath) == 0)
      let stored = try await harness.status()
      #expect(stored.task("dev.before") != nil, "\(stored.raw)")
      #expect(stored.task("dev.after") == nil, "\(stored.raw)")
    }
  }
}
