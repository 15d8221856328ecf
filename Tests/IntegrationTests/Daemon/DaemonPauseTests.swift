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
    func lines() -> [(pid: String, chunk: Int)] { Self.chunks(logged: workspace.lines(of: "log")) }

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
    #expect(frozen == true, "\(Self.notFrozen("the job's shell", pid, harness))")
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

  /// The stream crosses the link that turns metered: the job reads a file over TCP from a
  /// server in another namespace, through `veth0`, 4 KiB at a time. A reload that lists `veth0`
  /// as metered freezes the run mid-stream (the server's sends wait on the full window), a reload
  /// back thaws it, and the same process ends with an intact copy in its first attempt.
  @Test("a stream over the veth that turns metered and back is paused and ends intact")
  func aStreamOverTheLinkThatTurnsMetered() async throws {
    let client = try NamespaceSandbox.create(prefix: "paus")
    defer { client.remove() }
    let server = try NamespaceSandbox.create(prefix: "paus")
    defer { server.remove() }
    try server.ip("link", "del", "veth0")
    try client.ip("link", "set", "veth1", "netns", server.name)
    try server.ip("addr", "add", "10.237.0.2/24", "dev", "veth1")
    try server.ip("link", "set", "veth1", "up")
    try client.ip("addr", "add", "10.237.0.1/24", "dev", "veth0")
    try client.ip("link", "set", "veth0", "up")
    try client.ip("route", "add", "default", "via", "10.237.0.2", "dev", "veth0")

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let id = "dev.e2e.pause-stream"
    let source = workspace.file("source")
    let copy = workspace.file("copy")
    let log = workspace.file("log")
    let last = workspace.file("last-chunk")
    let chunks = 128
    var bytes = [UInt8](repeating: 0, count: chunks * 4096)
    for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
    try Data(bytes).write(to: URL(fileURLWithPath: source))
    let sender = try Self.startSender(
      in: server.name, port: 4470, file: source, ready: workspace.file("ready"))
    defer { try? sender.fileHandleForWriting.close() }
    try await daemonEventually("the sender") {
      FileManager.default.fileExists(atPath: workspace.file("ready")) ? true : nil
    }
    // 4 KiB read every 50 ms, each logged as "PID CHUNK"; the last read waits for `last-chunk`.
    let receive = """
      import os, socket, time
      s = socket.create_connection(("10.237.0.2", 4470))
      s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
      out = open("\(copy)", "wb")
      i = 0
      while True:
          if i == \(chunks - 1):
              while not os.path.exists("\(last)"): time.sleep(0.02)
          b = b""
          while len(b) < 4096:
              part = s.recv(4096 - len(b))
              if not part: break
              b += part
          if not b: break
          out.write(b); out.flush()
          with open("\(log)", "a") as f: f.write("%d %d\\n" % (os.getpid(), i))
          i += 1
          time.sleep(0.05)
      """
    let receiver = workspace.file("receive.py")
    try receive.write(toFile: receiver, atomically: true, encoding: .utf8)
    let job = daemonShellJob(
      id: id, script: "exec /usr/bin/python3 \(receiver)", schedule: "once = true",
      extra: """
        network = "unmetered"
        on-condition-lost = "pause"
        pause-max = "10m"
        budget = "10m"
        backoff = { initial = "1h" }
        """)
    func writeConfig(metered: String) throws {
      try workspace.writeRawConfig(
        """
        [store]
        path = "\(workspace.storePath)"
        [control]
        socket = "\(workspace.socketPath)"
        [network]
        metered = ["\(metered)"]
        networkmanager = false
        modemmanager = false

        \(job)
        """)
    }
    try writeConfig(metered: "nothing*")
    let harness = try DaemonHarness(workspace: workspace, namespace: client.name)
    defer { harness.cleanUp() }
    let daemon = try harness.startDaemon()
    func lines() -> [(pid: String, chunk: Int)] { Self.chunks(logged: workspace.lines(of: "log")) }
    let pid = try await daemonEventually("the stream", describe: harness.describe()) {
      lines().count >= 3 ? lines()[0].pid : nil
    }
    if let group = Int32(pid) { harness.adoptJobGroup(group) }

    // veth0, the link the stream crosses, turns metered: the run is paused mid-stream.
    try writeConfig(metered: "veth0")
    daemon.signal(SIGHUP)
    let paused = try await harness.waitForTask(id, "paused by the metered link") {
      $0.state == "paused"
    }
    #expect(paused.attempt == 0)
    let frozen = await eventually { Self.isFrozen(pid) ? true : nil }
    #expect(frozen == true, "\(Self.notFrozen("the job's process", pid, harness))")
    let before = lines().count
    _ = try await harness.cli("status", "--config", workspace.configPath)
    #expect(lines().count == before, "the stream went on while paused")
    #expect(before < chunks, "the copy ended before the pause")

    // Unmetered again: thawed, the same process reads on to the end.
    try writeConfig(metered: "nothing*")
    daemon.signal(SIGHUP)
    _ = try await harness.waitForTask(id, "thawed") { $0.state == "running" }
    try Data().write(to: URL(fileURLWithPath: last))
    _ = try await harness.waitForTask(id, "finished") { $0.lastResult == "success" }
    #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == Data(bytes), "the copy differs")
    #expect(Set(lines().map(\.pid)) == [pid], "one process")
    #expect(lines().map(\.chunk) == Array(0..<chunks))
    let history = try await harness.cli("history", id, "--json", "--config", workspace.configPath)
    let runs = try JSONDecoder().decode(DaemonHistory.self, from: Data(history.stdout.utf8)).runs
    #expect(runs.map(\.outcome) == ["success", "resumed", "paused"], "\(history.stdout)")
    #expect(runs.allSatisfy { $0.attempt == 0 }, "\(history.stdout)")
  }

  /// A TCP server in `namespace` that sends `file` to each connection, then closes it; it ends
  /// when the returned pipe is closed.
  private static func startSender(in namespace: String, port: Int, file: String, ready: String)
    throws -> Pipe
  {
    try startPythonInNamespace(
      namespace,
      """
      import socket
      s = socket.socket()
      s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      s.bind(("0.0.0.0", \(port)))
      s.listen(4)
      open("\(ready)", "w").close()
      data = open("\(file)", "rb").read()
      while True:
          c, _ = s.accept()
          c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
          c.sendall(data)
          c.close()
      """)
  }

  /// The "PID CHUNK" lines a streaming job logged, parsed.
  private static func chunks(logged lines: [String]) -> [(pid: String, chunk: Int)] {
    lines.compactMap { line in
      let fields = line.split(separator: " ")
      guard fields.count == 2, let chunk = Int(fields[1]) else { return nil }
      return (String(fields[0]), chunk)
    }
  }

  /// Whether process `pid` is stopped (`T`) or in a frozen cgroup.
  /// A failure's message for `what` (process `pid`) not seen frozen: what ``isFrozen(_:)``
  /// read, the daemon's lines about pauses and the network, and its last status steps.
  private static func notFrozen(_ what: String, _ pid: String, _ harness: DaemonHarness) -> String {
    let daemonSaid = harness.logLines(
      containing: "frozen", "thawed", "freeze", "thaw", "paus", "resum", "metered", "primary")
    return "\(what) is not frozen: \(freezeState(pid))\n\(daemonSaid)\n\(harness.describe())"
  }

  /// What ``isFrozen(_:)`` read, for a failure's message: the process's state letter and its
  /// cgroup's `cgroup.events`.
  private static func freezeState(_ pid: String) -> String {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "(no stat)"
    let state = stat.lastIndex(of: ")").map {
      stat[stat.index(after: $0)...].split(separator: " ").first.map(String.init) ?? "?"
    }
    let cgroup = (try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8))?
      .split(separator: "\n").first(where: { $0.hasPrefix("0::") }).map { String($0.dropFirst(3)) }
    let events = cgroup.flatMap {
      try? String(contentsOfFile: "/sys/fs/cgroup\($0)/cgroup.events", encoding: .utf8)
    }
    return "state \(state ?? "?"), cgroup \(cgroup ?? "?"), events \(events ?? "(none)")"
      + " at \(Date())"
  }

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
