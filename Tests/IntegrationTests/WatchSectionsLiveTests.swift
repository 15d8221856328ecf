import Foundation
import TestSupport
import Testing

/// `status --watch --json` re-reads the tasks only when they can have changed; a change made
/// by another process must still be in the next line. The real binary, in a network namespace
/// whose link the test flips to make network lines.
@Suite(
  .blockingIO,
  .timeLimit(.minutes(2)), .enabled(if: geteuid() == 0, "needs root for a network namespace"))
struct WatchSectionsLiveTests {
  private struct Line: Decodable {
    struct Task: Decodable {
      struct Predicate: Decodable { var kind: String }
      var id: String
      var pendingPredicates: [Predicate]
    }
    var network: [String: JSONValue]?
    var tasks: [Task]?
  }

  /// Any JSON value (the network section is only checked for presence).
  private struct JSONValue: Decodable {
    init(from decoder: any Decoder) throws {}
  }

  @Test("a task scheduled by another process, and a start time passing, show in the next line")
  func otherProcessesChangesShowInTheNextLine() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    try workspace.writeConfig(jobs: "")
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let watcher = try DaemonChild(
      [
        "/usr/sbin/ip", "netns", "exec", sandbox.name, harness.binary, "status", "--watch",
        "--json", "--config", workspace.configPath,
      ], outputPath: workspace.file("watch.out"), errorPath: workspace.file("watch.err"))
    defer { watcher.terminate() }
    let networkLines = { () -> [Line] in
      watcher.output.split(separator: "\n").compactMap {
        try? JSONDecoder().decode(Line.self, from: Data($0.utf8))
      }.filter { $0.network != nil }
    }
    let first = try await daemonEventually("the first line", describe: watcher.output) {
      networkLines().first
    }
    #expect(first.tasks?.isEmpty == true, "\(watcher.output)")

    var linkUp = false
    /// Flips veth0 and returns the first network line printed after that.
    func nextLine() async throws -> Line {
      let seen = networkLines().count
      linkUp.toggle()
      try sandbox.ip("link", "set", "veth0", linkUp ? "up" : "down")
      return try await daemonEventually(
        "a network line after veth0 went \(linkUp ? "up" : "down")",
        describe: watcher.output + watcher.errorOutput
      ) {
        let lines = networkLines()
        return lines.count > seen ? lines[seen] : nil
      }
    }

    let scheduled = try await harness.cli(
      "schedule", "dev.e2e.seen", "--once", "--delay", "1h", "--config", workspace.configPath,
      "--command", "/bin/true")
    try #require(scheduled.status == 0, "\(scheduled)")
    let afterSchedule = try await nextLine()
    #expect(afterSchedule.tasks?.map(\.id) == ["dev.e2e.seen"], "\(watcher.output)")

    // Settled (older than the file system's clock tick could hide): the store is not read
    // again for it, but a task's start time passing changes its pending predicates.
    let soon = try await harness.cli(
      "schedule", "dev.e2e.soon", "--once", "--delay", "4s", "--config", workspace.configPath,
      "--command", "/bin/true")
    try #require(soon.status == 0, "\(soon)")
    let waiting = try await nextLine()
    let soonTask = waiting.tasks?.first { $0.id == "dev.e2e.soon" }
    #expect(
      soonTask?.pendingPredicates.map(\.kind) == ["waitingForEarliestBeginDate"],
      "\(watcher.output)")
    try await Task.sleep(for: .seconds(5))
    let due = try await nextLine()
    let dueTask = due.tasks?.first { $0.id == "dev.e2e.soon" }
    #expect(dueTask != nil && dueTask?.pendingPredicates.isEmpty == true, "\(watcher.output)")
  }
}
