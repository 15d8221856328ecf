import Foundation
import TestSupport
import Testing

/// The real daemon inside a network namespace whose default route leads to a second namespace
/// (the "server side", made and deleted here): `requires-reachable` waits with the right reason
/// for a closed port, a dropped SYN (a blackholed route there) and a name that does not resolve,
/// and runs once the server listens and the network changes.
@Suite(
  .blockingIO,
  .enabled(if: getuid() == 0, "needs root to create network namespaces"),
  .timeLimit(.minutes(3)))
struct DaemonReachableTests {
  @Test("listening → runs with BACKGROUNDER_REACHABLE=1; refused, timed out, no name → waits")
  func waitsWithTheReasonAndRuns() async throws {
    let client = try NamespaceSandbox.create()
    defer { client.remove() }
    let server = try NamespaceSandbox.create()
    defer { server.remove() }
    // veth0 stays in the client namespace, veth1 becomes the server's link.
    try server.ip("link", "del", "veth0")
    try client.ip("link", "set", "veth1", "netns", server.name)
    try server.ip("addr", "add", "10.233.0.2/24", "dev", "veth1")
    try server.ip("link", "set", "veth1", "up")
    try client.ip("addr", "add", "10.233.0.1/24", "dev", "veth0")
    try client.ip("link", "set", "veth0", "up")
    try client.ip("route", "add", "default", "via", "10.233.0.2", "dev", "veth0")
    // A dropped SYN: the server side forwards 10.234.0.0/24 into a blackhole (no answer at all).
    try server.ip("route", "add", "blackhole", "10.234.0.0/24")
    try runChecked(
      "/usr/sbin/ip", "netns", "exec", server.name, "/bin/sh", "-c",
      "echo 1 > /proc/sys/net/ipv4/ip_forward")
    // Names inside the client namespace: `ip netns exec` binds /etc/netns/NAME/* over /etc.
    let etc = "/etc/netns/\(client.name)"
    let madeParent = !FileManager.default.fileExists(atPath: "/etc/netns")
    try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
    defer {
      try? FileManager.default.removeItem(atPath: etc)
      if madeParent { try? FileManager.default.removeItem(atPath: "/etc/netns") }
    }
    try "127.0.0.1 localhost\n10.233.0.2 nas.test\n".write(
      toFile: etc + "/hosts", atomically: true, encoding: .utf8)
    try "nameserver 10.233.0.2\noptions timeout:1 attempts:1\n".write(
      toFile: etc + "/resolv.conf", atomically: true, encoding: .utf8)

    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace, namespace: client.name)
    defer { harness.cleanUp() }
    func job(_ name: String, _ destination: String) -> String {
      daemonShellJob(
        id: "dev.e2e.reach.\(name)",
        script: "echo \"$BACKGROUNDER_REACHABLE $(date +%s.%N)\" >> \(workspace.file(name))",
        schedule: "once = true", extra: "requires-reachable = \"\(destination)\"\nbudget = \"8s\"")
    }
    try workspace.writeConfig(
      jobs: job("open", "nas.test:4450") + job("closed", "10.233.0.2:4451")
        + job("dropped", "10.234.0.7:4452") + job("nxdomain", "nowhere.invalid:445")
        + daemonShellJob(
          id: "dev.e2e.reach.long",
          script: "echo start >> \(workspace.file("long")) && exec sleep 60",
          schedule: "once = true", extra: "requires-reachable = \"nas.test:4450\"\nbudget = \"2m\"")
    )
    _ = try harness.startDaemon()

    for (name, failure) in [
      ("open", "refused"), ("closed", "refused"), ("dropped", "timedOut"),
      ("nxdomain", "doesNotResolve"),
    ] {
      let task = try await harness.waitForTask("dev.e2e.reach.\(name)", "waiting: \(failure)") {
        $0.pendingPredicates.contains { $0.kind == "reachable" && $0.failure == failure }
      }
      #expect(task.state == "blocked")
    }
    // Each new answer is in the journal, with the link it was asked over (logged just after
    // the answer is published, so it is waited for).
    let refused = "destination=10.233.0.2:4451 link=veth0 state=refused"
    try await daemonEventually("the journal line of the refused check") {
      harness.logLines(containing: "destination checked").contains(refused) ? true : nil
    }
    let human = try await harness.cli("status", "--config", workspace.configPath)
    #expect(human.stdout.contains("10.233.0.2:4451 to be reachable (connection refused)"))
    #expect(human.stdout.contains("10.234.0.7:4452 to be reachable (timed out)"))
    #expect(human.stdout.contains("nowhere.invalid:445 to be reachable (does not resolve)"))

    // The server starts listening, then the network changes (the primary link goes down and
    // comes back with its route): the held job runs.
    let listener = try startListener(in: server.name, port: 4450, ready: workspace.file("ready"))
    defer { try? listener.fileHandleForWriting.close() }  // twice is harmless
    try await daemonEventually("the listener") {
      FileManager.default.fileExists(atPath: workspace.file("ready")) ? true : nil
    }
    let changed = Date()
    try client.ip("link", "set", "veth0", "down")
    try client.ip("link", "set", "veth0", "up")
    try client.ip("route", "replace", "default", "via", "10.233.0.2", "dev", "veth0")
    let line = try await daemonEventually("the reachable job's run", describe: harness.describe()) {
      workspace.lines(of: "open").first
    }
    let fields = line.split(separator: " ")
    #expect(fields.first == "1", "BACKGROUNDER_REACHABLE=1")
    if let ran = fields.last.flatMap({ Double($0) }) {
      print(
        "requires-reachable: listening + network change → job running in "
          + "\(Int((ran - changed.timeIntervalSince1970) * 1000)) ms")
    }
    let done = try await harness.waitForTask("dev.e2e.reach.open", "succeeded") {
      $0.lastResult == "success"
    }
    #expect(done.recentRuns.contains { $0.outcome == "success" })
    for name in ["closed", "dropped", "nxdomain"] {
      #expect(workspace.lines(of: name).isEmpty, "\(name) never ran")
    }

    // The server goes away, then the network changes: the running job is stopped (a retry, no
    // attempt used) and waits again.
    try await daemonEventually("the long job's start", describe: harness.describe()) {
      workspace.lines(of: "long").isEmpty ? nil : true
    }
    try listener.fileHandleForWriting.close()
    try await daemonEventually("the listener's end") {
      FileManager.default.fileExists(atPath: workspace.file("ready")) ? nil : true
    }
    try client.ip("link", "set", "veth0", "down")
    try client.ip("link", "set", "veth0", "up")
    try client.ip("route", "replace", "default", "via", "10.233.0.2", "dev", "veth0")
    let stopped = try await harness.waitForTask("dev.e2e.reach.long", "stopped: unreachable") {
      $0.lastReason == "stopped: unreachable"
    }
    #expect(stopped.attempt == 0, "a stop for a lost condition uses no attempt")
    #expect(stopped.recentRuns.contains { $0.outcome == "stopped" && $0.reason == "unreachable" })
    let waiting = try await harness.waitForTask("dev.e2e.reach.long", "waiting: refused again") {
      $0.pendingPredicates.contains { $0.kind == "reachable" && $0.failure == "refused" }
    }
    // Back on the same network, the answer of its first check ("reachable") is not permission:
    // the job waits for the new check (which finds the port closed) and is not started again.
    // With the answer kept per network, it was started and stopped within the same second
    // (6 of 6 local runs, 2026-11-30).
    let log = harness.logLines(containing: "reach.long", "destination checked")
    #expect(
      waiting.recentRuns.filter { $0.outcome == "stopped" }.count == 1,
      "one run, stopped once:\n\(log)")
    #expect(workspace.lines(of: "long") == ["start"], "not started again:\n\(log)")
  }

  /// A TCP listener on `port` inside the namespace `namespace` (python3), which touches `ready`
  /// once it listens and, when the returned pipe is closed, stops listening, removes `ready`
  /// and exits.
  private func startListener(in namespace: String, port: Int, ready: String) throws -> Pipe {
    try startPythonInNamespace(
      namespace,
      """
      import socket
      s = socket.socket()
      s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
      s.bind(("0.0.0.0", \(port)))
      s.listen(16)
      open("\(ready)", "w").close()
      while True:
          try:
              c, _ = s.accept()
          except OSError:
              # The shutdown at the end ends accept() with an error: an uncaught one ended the
              # interpreter, killing the end thread before it removed `ready` (a 60 s wait,
              # then a failure). Wait here for that thread to exit the process.
              threading.Event().wait()
          c.close()
      """,
      // close() alone leaves the socket listening while accept() blocks on it in the main
      // thread (Linux keeps the file until that call returns): a check between the unlink and
      // the exit found the server up and started the job again.
      atEnd: """
        s.shutdown(socket.SHUT_RDWR)
        s.close()
        os.unlink("\(ready)")
        """)
  }

  private func runChecked(_ arguments: String...) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw NamespaceSandbox.CommandFailed(
        command: arguments.joined(separator: " "), output: "exit \(process.terminationStatus)")
    }
  }
}
