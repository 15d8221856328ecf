import Foundation
import Locking
import TestSupport
import Testing

/// A failure of the daemon harness (missing binary, timeout, unreadable status), with everything
/// observed so far in its description.
struct DaemonHarnessError: Error, CustomStringConvertible {
  var description: String

  init(_ description: String) {
    self.description = description
  }
}

/// The real `backgrounder` executable (or another one built with it, such as
/// `StallingDaemon`), built by `swift build --build-tests` into the same products directory as
/// the test bundle.
enum DaemonBinary {
  /// Its path; `BACKGROUNDER_BINARY` overrides the search (for another `name`, the search
  /// starts in that binary's directory).
  static func path(named name: String = "backgrounder") throws -> String {
    var candidates: [String] = []
    if let override = ProcessInfo.processInfo.environment["BACKGROUNDER_BINARY"] {
      guard FileManager.default.isExecutableFile(atPath: override) else {
        throw DaemonHarnessError("BACKGROUNDER_BINARY=\(override) is not an executable file")
      }
      if name == "backgrounder" { return override }
      candidates.append(
        URL(fileURLWithPath: override).deletingLastPathComponent().appendingPathComponent(name)
          .path)
    }
    let starts = [
      URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(),
      Bundle.main.executableURL?.resolvingSymlinksInPath(),
      Bundle.main.bundleURL.resolvingSymlinksInPath(),
    ]
    for start in starts.compactMap({ $0 }) {
      var directory = start.deletingLastPathComponent()
      for _ in 0..<5 {
        candidates.append(directory.appendingPathComponent(name).path)
        directory = directory.deletingLastPathComponent()
      }
    }
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
      return found
    }
    throw DaemonHarnessError(
      "the \(name) executable was not found (build it with `swift build --build-tests`, "
        + "or set BACKGROUNDER_BINARY); looked at:\n  "
        + candidates.joined(separator: "\n  "))
  }
}

/// A fresh temporary directory per test with a config whose store and control socket live in it.
/// ``remove()`` deletes it (tests call it in `defer`).
struct DaemonWorkspace: Sendable {
  let directory: String
  var configPath: String { directory + "/config.toml" }
  var storePath: String { directory + "/state.sqlite" }
  var socketPath: String { directory + "/control.sock" }

  init() throws {
    // Short: the control socket path must fit in sun_path (108 bytes).
    directory = "/tmp/bge2e-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false)
    // 0755 whatever the umask: tests run in one process, where a control server binding its
    // socket narrows the umask for a moment, and the second-uid tests must traverse this.
    guard chmod(directory, 0o755) == 0 else {
      throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: directory])
    }
  }

  /// A path inside the workspace.
  func file(_ name: String) -> String { directory + "/" + name }

  /// Writes the config: `[store]` and `[control]` pointing into the workspace, then `jobs`
  /// (TOML `[[job]]` tables).
  func writeConfig(jobs: String) throws {
    try writeRawConfig(
      """
      [store]
      path = "\(storePath)"
      [control]
      socket = "\(socketPath)"

      \(jobs)
      """)
  }

  /// Replaces the config file with `text` as is.
  func writeRawConfig(_ text: String) throws {
    try text.write(toFile: configPath, atomically: true, encoding: .utf8)
  }

  /// The lines of a side-effect file; empty when it does not exist.
  func lines(of name: String) -> [String] {
    guard let text = try? String(contentsOfFile: file(name), encoding: .utf8) else { return [] }
    return text.split(separator: "\n").map(String.init)
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: directory)
  }
}

/// A TOML `[[job]]` table for a command run through `/bin/sh -c SCRIPT`.
func daemonShellJob(id: String, script: String, schedule: String, extra: String = "") -> String {
  let escaped = script.replacingOccurrences(of: "\\", with: "\\\\")
    .replacingOccurrences(of: "\"", with: "\\\"")
  return """
    [[job]]
    id = "\(id)"
    command = ["/bin/sh", "-c", "\(escaped)"]
    \(schedule)
    \(extra)

    """
}

/// Polls `probe` until it returns a value or `timeout` passes. `describe` says what was seen
/// last, for the timeout error.
@discardableResult
func daemonEventually<T>(
  _ what: String, timeout: Duration = testEventTimeout, interval: Duration = .milliseconds(150),
  describe: @autoclosure () -> String = "", _ probe: () async throws -> T?
) async throws -> T {
  let clock = ContinuousClock()
  let deadline = clock.now.advanced(by: timeout)
  while true {
    if let value = try await probe() { return value }
    if clock.now >= deadline {
      throw DaemonHarnessError("timed out after \(timeout) waiting for \(what)\n\(describe())")
    }
    try await Task.sleep(for: interval)
  }
}

/// Whether any live (non-zombie) process is in process group `group`, read from `/proc`.
func daemonProcessGroupAlive(_ group: Int32) -> Bool {
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  for entry in entries where entry.allSatisfy(\.isNumber) {
    guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { continue }
    // After "pid (comm) ": state ppid pgrp ...
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 2, fields[0] != "Z", fields[0] != "X" else { continue }
    if Int32(fields[2]) == group { return true }
  }
  return false
}

/// A child process whose stdout and stderr go to files, awaitable without blocking a thread.
final class DaemonChild: Sendable {
  let process: Process
  let outputPath: String
  private let exits: Lock<AsyncStream<Int32>?>
  private let exitStatus = Lock<Int32?>(nil)

  let errorPath: String

  /// Starts `arguments[0]` with the rest as arguments; stdout goes to `outputPath`, stderr to
  /// `errorPath` (default: the same file). `environment` is added to the test's own.
  init(
    _ arguments: [String], outputPath: String, errorPath: String? = nil,
    environment: [String: String] = [:]
  ) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
    process.standardOutput = output
    var error = output
    if let errorPath {
      _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
      error = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    }
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
    process.terminationHandler = { finished in
      continuation.yield(finished.terminationStatus)
      continuation.finish()
    }
    self.process = process
    self.outputPath = outputPath
    self.errorPath = errorPath ?? outputPath
    self.exits = Lock(stream)
    defer {
      try? output.close()
      if errorPath != nil { try? error.close() }
    }
    try process.run()
  }

  var pid: Int32 { process.processIdentifier }
  var isRunning: Bool { process.isRunning }

  /// What it printed on stdout (and stderr, when they share a file) so far.
  var output: String {
    (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "<no output>"
  }

  /// What it printed on stderr so far.
  var errorOutput: String {
    (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "<no output>"
  }

  /// The exit status (or signal number) once it exits, or nil after `timeout`.
  func waitForExit(timeout: Duration) async -> Int32? {
    if let status = exitStatus.withLock({ $0 }) { return status }
    guard let stream = exits.withLock({ $0 }) else { return nil }
    let status: Int32? = await withTaskGroup(of: Int32?.self) { group in
      group.addTask {
        for await status in stream { return status }
        return nil
      }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
    if let status {
      exitStatus.withLock { $0 = status }
      exits.withLock { $0 = nil }
    }
    return status
  }

  func signal(_ signal: Int32) {
    if process.isRunning { kill(process.processIdentifier, signal) }
  }

  /// SIGKILL and reap; safe to call more than once and from `defer`.
  func terminate() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

/// `history ID --json`: the fields the tests read.
struct DaemonHistory: Decodable {
  struct Run: Decodable {
    var attempt: Int
    var startedAt: String?
    var endedAt: String
    var durationSeconds: Double?
    var outcome: String
    var reason: String?
    var conditions: String?
    var outputTail: String?
    var stop: String?
  }

  var id: String
  var runs: [Run]
}

/// What one CLI invocation did.
struct DaemonCLIResult: Sendable, CustomStringConvertible {
  var arguments: [String]
  var status: Int32
  var stdout: String
  var stderr: String
  var description: String {
    "`backgrounder \(arguments.joined(separator: " "))` exited \(status)\n"
      + "stdout: \(stdout)\nstderr: \(stderr)"
  }
}

/// Runs CLI verbs and a daemon against one workspace, optionally inside a network namespace
/// (`ip netns exec NS ...`). ``cleanUp()`` kills every daemon and job process group it started
/// or was told about.
final class DaemonHarness: Sendable {
  let workspace: DaemonWorkspace
  let binary: String
  let namespace: String?
  /// Put before the daemon's command line only (the CLI runs without it): `unshare -m ...`.
  let daemonWrapper: [String]
  private let daemons = Lock<[DaemonChild]>([])
  private let jobGroups = Lock<Set<Int32>>([])
  private let trace = Lock<[String]>([])

  init(workspace: DaemonWorkspace, namespace: String? = nil, daemonWrapper: [String] = []) throws {
    self.workspace = workspace
    self.binary = try DaemonBinary.path()
    self.namespace = namespace
    self.daemonWrapper = daemonWrapper
  }

  private func commandLine(_ arguments: [String], binary: String? = nil) -> [String] {
    let prefix = namespace.map { ["/usr/sbin/ip", "netns", "exec", $0] } ?? []
    return prefix + [binary ?? self.binary] + arguments
  }

  /// Starts `backgrounder run --config CFG` (then `arguments`) with `environment` added to the
  /// test's own; `binary` replaces `backgrounder` (a test executable taking the same arguments).
  func startDaemon(
    environment: [String: String] = [:], arguments: [String] = [], binary: String? = nil
  ) throws -> DaemonChild {
    let count = daemons.withLock { $0.count }
    let daemon = try DaemonChild(
      daemonWrapper
        + commandLine(["run", "--config", workspace.configPath] + arguments, binary: binary),
      outputPath: workspace.file("daemon-\(count).log"), environment: environment)
    daemons.withLock { $0.append(daemon) }
    return daemon
  }

  /// Runs one verb to completion (at most 60 s) and returns its exit status and output.
  func cli(_ arguments: String...) async throws -> DaemonCLIResult {
    try await cli(arguments)
  }

  func cli(_ arguments: [String], environment: [String: String] = [:]) async throws
    -> DaemonCLIResult
  {
    let name = "cli-\(UUID().uuidString)"
    let outputPath = workspace.file(name + ".out")
    let errorPath = workspace.file(name + ".err")
    defer {
      try? FileManager.default.removeItem(atPath: outputPath)
      try? FileManager.default.removeItem(atPath: errorPath)
    }
    let child = try DaemonChild(
      commandLine(arguments), outputPath: outputPath, errorPath: errorPath,
      environment: environment)
    guard let status = await child.waitForExit(timeout: .seconds(60)) else {
      child.terminate()
      throw DaemonHarnessError("`backgrounder \(arguments.joined(separator: " "))` hung")
    }
    return DaemonCLIResult(
      arguments: arguments, status: status, stdout: child.output, stderr: child.errorOutput)
  }

  /// `status --json --config CFG`, decoded; the raw JSON is appended to the trace.
  func status() async throws -> DaemonStatus {
    let result = try await cli("status", "--json", "--config", workspace.configPath)
    record(result.stdout)
    guard result.status == 0 else { throw DaemonHarnessError("status failed: \(result)") }
    let json = result.stdout
    do {
      var document = try JSONDecoder().decode(DaemonStatus.self, from: Data(json.utf8))
      document.raw = json
      return document
    } catch {
      throw DaemonHarnessError("cannot decode status JSON (\(error)):\n\(json)")
    }
  }

  /// `history ID --json --config CFG`, decoded.
  func history(_ id: String) async throws -> DaemonHistory {
    let result = try await cli("history", id, "--json", "--config", workspace.configPath)
    guard result.status == 0 else { throw DaemonHarnessError("history failed: \(result)") }
    return try JSONDecoder().decode(DaemonHistory.self, from: Data(result.stdout.utf8))
  }

  /// The last run of `id` in `history`.
  func lastRun(_ id: String) async throws -> DaemonHistory.Run {
    let history = try await history(id)
    guard let run = history.runs.first else { throw DaemonHarnessError("\(id) has no runs") }
    return run
  }

  /// Polls `status` until `predicate` holds for the task `id` (present), returning that task.
  func waitForTask(
    _ id: String, _ what: String, timeout: Duration = testEventTimeout,
    where predicate: @escaping (DaemonTaskStatus) -> Bool
  ) async throws -> DaemonTaskStatus {
    try await daemonEventually(
      "\(id): \(what)", timeout: timeout, describe: self.describe()
    ) {
      let status = try await self.status()
      return status.task(id).flatMap { predicate($0) ? $0 : nil }
    }
  }

  /// Remembers a job's process group so that ``cleanUp()`` kills it.
  func adoptJobGroup(_ group: Int32) {
    jobGroups.withLock { _ = $0.insert(group) }
  }

  /// A step for the trace shown when something fails.
  func record(_ step: String) {
    trace.withLock { $0.append(step) }
  }

  /// The last status documents and the daemon logs, for failure messages.
  func describe() -> String {
    let steps = trace.withLock { $0.suffix(3) }.joined(separator: "\n---\n")
    let logs = daemons.withLock { $0 }.enumerated().map { index, daemon in
      "daemon \(index) log (tail):\n"
        + daemon.output.split(separator: "\n").suffix(30)
        .joined(separator: "\n")
    }
    return (["last status steps:\n" + steps] + logs).joined(separator: "\n")
  }

  /// The daemons' log lines that contain any of `text` (all of them, not a tail), for failure
  /// messages.
  func logLines(containing text: String...) -> String {
    daemons.withLock { $0 }.flatMap { daemon in
      daemon.output.split(separator: "\n").filter { line in text.contains { line.contains($0) } }
    }.joined(separator: "\n")
  }

  /// Kills every daemon and adopted job process group.
  func cleanUp() {
    for daemon in daemons.withLock({ $0 }) { daemon.terminate() }
    for group in jobGroups.withLock({ $0 }) where group > 1 { kill(-group, SIGKILL) }
  }
}

/// The parts of `status --json` the tests read.
struct DaemonStatus: Decodable, Sendable {
  var tasks: [DaemonTaskStatus]?
  var raw = ""

  private enum CodingKeys: String, CodingKey { case tasks }

  func task(_ id: String) -> DaemonTaskStatus? {
    tasks?.first { $0.id == id }
  }
}

/// One entry of `tasks` in `status --json`.
struct DaemonTaskStatus: Decodable, Sendable {
  struct Predicate: Decodable, Sendable {
    var kind: String
    /// Why a `reachable` destination failed last ("refused", "timedOut", …).
    var failure: String?
    /// A spent `meteredBudget`: bytes used and the budget's bytes and window.
    var used: Int64?
    var budget: Int64?
    var window: String?
  }

  struct Run: Decodable, Sendable {
    var attempt: Int
    var startedAt: String?
    var endedAt: String
    var outcome: String
    var reason: String?
  }

  var id: String
  var kind: String
  var state: String
  var nextRun: String?
  var attempt: Int
  var deferrals: Int
  var lastResult: String?
  var lastReason: String?
  var pendingPredicates: [Predicate]
  var lastRunStartedAt: String?
  var recentRuns: [Run]

  var predicateKinds: [String] { pendingPredicates.map(\.kind) }

  /// `nextRun` as a date.
  var nextRunDate: Date? { nextRun.flatMap(Self.date) }

  static func date(_ text: String) -> Date? {
    try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
  }
}
