import Foundation
import TestSupport
import Testing

/// `relax-after` against the real daemon in a network namespace whose only uplink, `hot0`, is
/// metered (`[network] metered = ["hot*"]`): an `unmetered` job waits, its conditions relax
/// after its `relax-after` (`network` → `not-roaming`), and it runs on the metered link with
/// `BACKGROUNDER_RELAXED=1`; history, the journal and the metric say it ran relaxed. A job whose
/// `relax-after` is an hour away waits, and `status` says when it relaxes.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonRelaxTests {
  @Test("a job that waited its relax-after for an unmetered link runs relaxed on a metered one")
  func relaxedRunOnAMeteredLink() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("link", "add", "hot0", "type", "veth", "peer", "name", "hot0p")
    try sandbox.ip("link", "set", "hot0p", "up")
    try sandbox.ip("link", "set", "hot0", "up")
    try sandbox.ip("addr", "add", "10.88.2.2/24", "dev", "hot0")
    try sandbox.ip("route", "add", "default", "via", "10.88.2.1", "dev", "hot0")

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let soon = "dev.e2e.relax-soon"
    let later = "dev.e2e.relax-later"
    let metrics = workspace.file("metrics.prom")
    let ran = workspace.file("ran")
    func job(_ id: String, relaxAfter: String) -> String {
      daemonShellJob(
        id: id, script: "echo \"\(id) relaxed=${BACKGROUNDER_RELAXED:-unset}\" >> \(ran)",
        schedule: "once = true",
        extra: """
          network = "unmetered"
          relax-after = "\(relaxAfter)"
          backoff = { initial = "1h" }
          """)
    }
    try workspace.writeRawConfig(
      """
      [store]
      path = "\(workspace.storePath)"
      [control]
      socket = "\(workspace.socketPath)"
      [metrics]
      file = "\(metrics)"
      [network]
      metered = ["hot*"]

      \(job(soon, relaxAfter: "2s"))
      \(job(later, relaxAfter: "1h"))
      """)
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()

    // The job whose wait relaxes in an hour waits, and says when it relaxes.
    let waiting = try await harness.waitForTask(later, "waiting for an unmetered link") {
      $0.predicateKinds.contains("networkRequired")
    }
    #expect(waiting.recentRuns.isEmpty)
    let json = try await harness.cli("status", "--json", "--config", workspace.configPath)
    let relaxesAt = try #require(Self.relaxesAt(of: later, in: json.stdout), "\(json.stdout)")
    let inAnHour = Date().addingTimeInterval(3600)
    #expect(abs(relaxesAt.timeIntervalSince(inAnHour)) < 120, "\(relaxesAt)")
    let text = try await harness.cli("status", "--config", workspace.configPath)
    #expect(text.stdout.contains("relaxes in "), "\(text.stdout)")

    // The other one ran after its 2 s, relaxed, on the metered link.
    let run = try await daemonEventually("\(soon) to run relaxed", describe: harness.describe()) {
      workspace.lines(of: "ran").isEmpty ? nil : workspace.lines(of: "ran")
    }
    #expect(run == ["\(soon) relaxed=1"])
    _ = try await harness.waitForTask(soon, "its run recorded") { $0.lastResult == "success" }
    let last = try await harness.lastRun(soon)
    let reason = try #require(last.reason, "\(last)")
    #expect(reason.hasPrefix("ran relaxed after waiting "), "\(reason)")
    #expect(reason.hasSuffix(" for an unmetered network"), "\(reason)")
    let counted = await eventually {
      let text = (try? String(contentsOfFile: metrics, encoding: .utf8)) ?? ""
      return text.contains("backgrounder_relaxed_runs_total{job=\"\(soon)\"} 1") ? true : nil
    }
    #expect(counted == true, "\((try? String(contentsOfFile: metrics, encoding: .utf8)) ?? "")")
    #expect(workspace.lines(of: "ran").count == 1, "the waiting job did not run")

    #expect(
      daemon.output.contains("run started under relaxed conditions (relax-after)"),
      "\(harness.describe())")
  }

  /// `relaxesAt` of task `id` in `status --json` output.
  private static func relaxesAt(of id: String, in json: String) -> Date? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
      let tasks = (object as? [String: Any])?["tasks"] as? [[String: Any]],
      let text = tasks.first(where: { $0["id"] as? String == id })?["relaxesAt"] as? String
    else { return nil }
    return DaemonTaskStatus.date(text)
  }
}
