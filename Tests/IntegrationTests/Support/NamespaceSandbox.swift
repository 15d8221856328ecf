import Foundation
import Reachability
import TestSupport

/// A network namespace `bgtest-<random>` with a veth pair `veth0` / `veth1` inside it, made with
/// iproute2. Call ``remove()`` when done (tests do it in `defer`, so failures clean up too).
struct NamespaceSandbox: Sendable {
  struct CommandFailed: Error, CustomStringConvertible {
    var command: String
    var output: String
    var description: String { "`\(command)` failed: \(output)" }
  }

  struct TimedOut: Error, CustomStringConvertible {
    var waitingFor: String
    var description: String { "timed out waiting for \(waitingFor)" }
  }

  let name: String
  var path: String { "/var/run/netns/\(name)" }

  /// `prefix` starts the namespace's name (`bgtest` unless a suite wants its own); without
  /// `vethPair`, the namespace has only `lo`, down.
  static func create(prefix: String = "bgtest", vethPair: Bool = true) throws -> NamespaceSandbox {
    let sandbox = NamespaceSandbox(name: "\(prefix)-\(UInt32.random(in: 0...UInt32.max))")
    try run(["netns", "add", sandbox.name])
    guard vethPair else { return sandbox }
    do {
      try sandbox.ip("link", "set", "lo", "up")
      try sandbox.ip("link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
      try sandbox.ip("link", "set", "veth1", "up")
    } catch {
      sandbox.remove()
      throw error
    }
    return sandbox
  }

  /// Runs `ip -n NAME ARGS...`.
  func ip(_ arguments: String...) throws {
    try Self.run(["-n", name] + arguments)
  }

  func remove() {
    _ = try? Self.run(["netns", "del", name])
  }

  /// Two namespaces joined by a veth pair: `client`'s `veth0` (10.`subnet`.0.1/24, the default
  /// route via its peer) and `server`'s `veth1` (10.`subnet`.0.2/24). Remove both when done.
  static func linkedPair(prefix: String, subnet: Int) throws -> (
    client: NamespaceSandbox, server: NamespaceSandbox
  ) {
    let client = try create(prefix: prefix)
    do {
      let server = try create(prefix: prefix)
      do {
        try server.ip("link", "del", "veth0")
        try client.ip("link", "set", "veth1", "netns", server.name)
        try server.ip("addr", "add", "10.\(subnet).0.2/24", "dev", "veth1")
        try server.ip("link", "set", "veth1", "up")
        try client.ip("addr", "add", "10.\(subnet).0.1/24", "dev", "veth0")
        try client.ip("link", "set", "veth0", "up")
        try client.ip("route", "add", "default", "via", "10.\(subnet).0.2", "dev", "veth0")
        return (client, server)
      } catch {
        server.remove()
        throw error
      }
    } catch {
      client.remove()
      throw error
    }
  }

  private static func run(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      throw CommandFailed(command: "ip " + arguments.joined(separator: " "), output: output)
    }
  }
}

extension ReachabilityMonitor {
  /// The first status (current one included) satisfying `predicate`, or ``TimedOut``.
  func firstStatus(
    _ description: String, timeout: Duration = testEventTimeout,
    where predicate: @escaping @Sendable (NetworkStatus) -> Bool
  ) async throws -> NetworkStatus {
    let updates = statusUpdates()
    return try await withThrowingTaskGroup(of: NetworkStatus?.self) { group in
      group.addTask {
        for await status in updates where predicate(status) { return status }
        return nil
      }
      group.addTask {
        try await Task.sleep(for: timeout)
        return nil
      }
      let first = try await group.next() ?? nil
      group.cancelAll()
      if let first { return first }
      // The timer and the reader may become runnable together (a test run that keeps the
      // cooperative threads busy delays both): a status the monitor holds now still counts.
      let now = status
      guard predicate(now) else { throw NamespaceSandbox.TimedOut(waitingFor: description) }
      return now
    }
  }
}

/// Starts `program` (Python) with python3 in network namespace `namespace`, its output
/// discarded; it ends when the returned pipe is closed (`ip netns exec` does not pass a signal
/// on to it): a thread of its own waits for the end of its standard input, runs `atEnd` (Python
/// statements, one per line), then exits the process.
func startPythonInNamespace(_ namespace: String, _ program: String, atEnd: String = "") throws
  -> Pipe
{
  let process = Process()
  let stdin = Pipe()
  process.standardInput = stdin
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
  let prelude =
    ["import os, sys, threading", "def end():", "    sys.stdin.read()"]
    + atEnd.split(separator: "\n").map { "    " + $0 }
    + ["    os._exit(0)", "threading.Thread(target=end, daemon=True).start()"]
  process.arguments = [
    "netns", "exec", namespace, "/usr/bin/python3", "-c",
    prelude.joined(separator: "\n") + "\n" + program,
  ]
  try process.run()
  return stdin
}

/// A TCP receiver in `namespace` (python3) on `port`: it reads each connection to its end,
/// appends `BYTES SECONDS` to `log` (the seconds from its first byte to its end), answers one
/// byte and closes; it touches `ready` once it listens and exits when the returned pipe is
/// closed.
func startTCPReceiver(in namespace: String, port: Int, log: String, ready: String) throws -> Pipe {
  try startPythonInNamespace(
    namespace,
    """
    import socket, time
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", \(port)))
    s.listen(16)
    open("\(ready)", "w").close()
    while True:
        c, _ = s.accept()
        n = 0
        first = None
        while True:
            b = c.recv(65536)
            if not b:
                break
            if first is None:
                first = time.monotonic()
            n += len(b)
        seconds = time.monotonic() - first if first is not None else 0.0
        with open("\(log)", "a") as f:
            f.write("%d %.6f\\n" % (n, seconds))
        c.sendall(b"k")
        c.close()
    """)
}

/// A real daemon's uploads across a link: a ``NamespaceSandbox/linkedPair(prefix:subnet:)``
/// whose `client` namespace holds the daemon (``harness``) and whose `server` namespace holds a
/// ``startTCPReceiver(in:port:log:ready:)`` on `port`, logging to the workspace's `received`
/// file; ``remove()`` undoes it all.
struct UploadRig {
  let client: NamespaceSandbox
  let server: NamespaceSandbox
  let workspace: DaemonWorkspace
  let harness: DaemonHarness
  private let receiver: Pipe
  private let address: String
  private let port: Int

  /// Sets it up and waits for the receiver to listen.
  static func make(prefix: String, subnet: Int, port: Int) async throws -> UploadRig {
    let (client, server) = try NamespaceSandbox.linkedPair(prefix: prefix, subnet: subnet)
    var cleanUp: [() -> Void] = [client.remove, server.remove]
    do {
      let workspace = try DaemonWorkspace()
      cleanUp.insert(workspace.remove, at: 0)
      let receiver = try startTCPReceiver(
        in: server.name, port: port, log: workspace.file("received"),
        ready: workspace.file("ready"))
      cleanUp.insert({ try? receiver.fileHandleForWriting.close() }, at: 0)
      try await daemonEventually("the receiver") {
        FileManager.default.fileExists(atPath: workspace.file("ready")) ? true : nil
      }
      let harness = try DaemonHarness(workspace: workspace, namespace: client.name)
      return UploadRig(
        client: client, server: server, workspace: workspace, harness: harness,
        receiver: receiver, address: "10.\(subnet).0.2", port: port)
    } catch {
      for step in cleanUp { step() }
      throw error
    }
  }

  /// One line of Python that uploads `bytes` (an expression) to the receiver and waits for its
  /// answer.
  func upload(_ bytes: String) -> String {
    "import socket; s = socket.create_connection((\"\(address)\", \(port))); "
      + "s.sendall(b\"x\" * \(bytes)); s.shutdown(socket.SHUT_WR); s.recv(16); s.close()"
  }

  /// The receiver's log: one `BYTES SECONDS` line per upload.
  var uploads: [[Substring]] {
    workspace.lines(of: "received").map { $0.split(separator: " ") }
  }

  /// Stops the daemon and the receiver, removes the workspace and both namespaces.
  func remove() {
    harness.cleanUp()
    try? receiver.fileHandleForWriting.close()
    workspace.remove()
    client.remove()
    server.remove()
  }
}
