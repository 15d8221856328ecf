import Foundation
import TestSupport
import Testing

/// `on-condition-lost = "pause"` against the real daemon in a network namespace with two
/// uplinks, `hot0` metered by `[network] metered = ["hot*"]` (as in `DaemonRouteReplaceTests`):
/// a job with `network = "unmetered"` streams a copy of a file chunk by chunk, logging each
/// chunk; the default route moves to `hot0` (the link turns metered: the run is frozen, the log
/// stops growing) and back to `lan0` (thawed: the same process carries on), and the copy ends
/// intact in one attempt. `status`, `history`, the journal and the metrics say it was paused.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(2)))
struct DaemonPauseTests {
  @Test("a metered link freezes the run, unmetered again thaws the same process: one attempt")
  func pauseAndResume() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    for (link, subnet) in [("lan0", 1), ("hot0", 2)] {
      try sandbox.ip("link", "add", link, "type", "veth", "peer", "name", link + "p")
      try sandbox.ip("link", "set", link + "p", "up")
      try sandbox.ip("link", "set", link, "up")
      try sandbox.ip("addr", "add", "10.88.\(subnet).2/24", "dev", link)
    }
    try sandbox.ip("route", "add", "default", "via", "10.88.1.1", "dev", "lan0")

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let id = "dev.e2e.pause"
    let source = workspace.file("source")
    let copy = workspace.file("copy")
    let log = workspace.file("log")
    let last = workspace.file("last-chunk")
    let metrics = workspace.file("metrics.prom")
    let chunks = 128
    var bytes = [UInt8](repeating: 0, count: chunks * 4096)
    for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
    try Data(bytes).write(to: URL(fileURLWithPath: source))
    // One 4 KiB chunk every 50 ms, each logged as "PID CHUNK"; the last waits for `last-chunk`,
    // so the copy cannot end before the test has paused and thawed it.
    let job = daemonShellJob(
      id: id,
      script: "i=0; while [ $i -lt \(chunks) ]; do "
        + "if [ $i -eq \(chunks - 1) ]; then while [ ! -e \(last) ]; do sleep 0.02; done; fi; "
        + "dd if=\(source) of=\(copy) bs=4096 skip=$i seek=$i count=1 conv=notrunc "
        + "status=none || exit 1; echo \"$$ $i\" >> \(log); i=$((i+1)); sleep 0.05; done",
      schedule: "once = true",
      extra: """
        network = "unmetered"
        on-condition-lost = "pause"
        pause-max = "10m"
        budget = "10m"
        backoff = { initial = "1h" }
        """)
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

      \(job)
      """)
    let harness = try DaemonHarness(workspace: workspace, namespace: sandbox.name)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()
    func lines() -> [(pid: String, chunk: Int)] {
      workspace.lines(of: "log").compactMap { line in
        let fields = line.split(separator: " ")
        guard fields.count == 2, let chunk = Int(fields[1]) else { return nil }
        return (String(fields[0]), chunk)
      }
    }

    let pid = try await daemonEventually("the copy streaming", describe: harness.describe()) {
      lines().count >= 3 ? lines()[0].pid : nil
    }
    if let group = Int32(pid) { harness.adoptJobGroup(group) }

    // The link turns metered: the run is paused, not stopped.
    try sandbox.ip("route", "replace", "default", "via", "10.88.2.1", "dev", "hot0")
    let paused = try await harness.waitForTask(id, "paused by the metered link") {
      $0.state == "paused"
    }
    #expect(paused.attempt == 0)
    let json = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(json.stdout.contains("\"pauseReason\":\"networkMetered\""), "\(json.stdout)")
    let text = try await harness.cli("status", "--config", workspace.configPath)
    #expect(text.stdout.contains("paused (metered network) since "), "\(text.stdout)")
    // Frozen: the job's shell is stopped (SIGSTOP: `T`) or its cgroup frozen, and then the log
    // does not grow across a status call. The store may say `paused` a moment before the freeze
    // is asked for, and the kernel stops the tasks after the request (`frozen 1` in
    // `cgroup.events` and `T` in `/proc/PID/stat` come when every task has stopped): waited for.
    let frozen = await eventually { Self.isFrozen(pid) ? true : nil }
    #expect(frozen == true, "the job's shell is not frozen")
    let whilePaused = lines().count
    _ = try await harness.cli("status", "--config", workspace.configPath)
    #expect(lines().count == whilePaused, "the copy went on while the run was paused")

    // Unmetered again: thawed, the same process copies on.
    try sandbox.ip("route", "replace", "default", "via", "10.88.1.1", "dev", "lan0")
    try await daemonEventually("the copy to go on", describe: harness.describe()) {
      lines().count > whilePaused + 2 || lines().count == chunks - 1 ? true : nil
    }
    _ = FileManager.default.createFile(atPath: last, contents: nil)
    let finished = try await harness.waitForTask(id, "finished") {
      $0.lastResult == "success"
    }
    #expect(finished.attempt == 0)
    let all = lines()
    #expect(Set(all.map(\.pid)) == [pid], "the run was restarted: \(Set(all.map(\.pid)))")
    #expect(all.map(\.chunk) == Array(0..<chunks), "the copy did not carry on")
    #expect(FileManager.default.contents(atPath: copy) == Data(bytes), "the copy is not intact")

    // History: paused, resumed, then the one successful end, all in attempt 0.
    let history = try await harness.cli("history", id, "--json", "--config", workspace.configPath)
    let runs = try JSONDecoder().decode(DaemonHistory.self, from: Data(history.stdout.utf8)).runs
    #expect(runs.map(\.outcome) == ["success", "resumed", "paused"], "\(history.stdout)")
    #expect(runs.allSatisfy { $0.attempt == 0 }, "\(history.stdout)")
    #expect(runs.last?.reason == "metered network", "\(history.stdout)")
    // The journal (the daemon's log) and the metrics count the pause.
    #expect(daemon.output.contains("run paused: metered network"), "\(harness.describe())")
    #expect(daemon.output.contains("run resumed after"), "\(harness.describe())")
    // The textfile is rewritten within a second of a change.
    _ = try await daemonEventually("the pause in the textfile", describe: harness.describe()) {
      let prometheus = (try? String(contentsOfFile: metrics, encoding: .utf8)) ?? ""
      return prometheus.contains(
        "backgrounder_pauses_total{job=\"\(id)\",reason=\"networkMetered\"} 1") ? true : nil
    }
  }

  /// Whether process `pid` is stopped (`T`) or in a frozen cgroup.
  private static func isFrozen(_ pid: String) -> Bool {
    if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")"),
      stat[stat.index(after: close)...].split(separator: " ").first == "T"
    {
      return true
    }
    guard let cgroup = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8),
      let line = cgroup.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
      let events = try? String(
        contentsOfFile: "/sys/fs/cgroup\(line.dropFirst(3))/cgroup.events", encoding: .utf8)
    else { return false }
    return events.contains("frozen 1")
  }

}
