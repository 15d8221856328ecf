import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Logging
import TestSupport
import Testing

@testable import BackgrounderDaemon

/// Staleness alerts and hooks against a real runtime and store, driven by the manual clock:
/// the hooks are real processes that write their environment to a file.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct AlertWatchTests {
  /// Fails until told to succeed.
  private final class SwitchWorker: Worker {
    let succeeds = Lock(false)

    func execute(_ context: WorkContext) async -> WorkResult {
      succeeds.withLock { $0 } ? .success : .failure(reason: "exit status 1: disk full")
    }
  }

  private static let day: Duration = .seconds(86_400)

  @Test("with no job alerts the watch is not watching: its events are dropped")
  func watchesOnlyWithJobAlerts() {
    let logger = Logger(label: "test.alerts")
    let watch = AlertWatch(
      clock: ManualClock(), read: { _ in throw CancellationError() },
      hooks: AlertHooks(runner: CommandRunner(logger: logger), logger: logger), metrics: nil,
      logger: logger)
    #expect(!watch.isWatching)
    var configuration = DaemonConfiguration(sourcePath: "/nonexistent")
    configuration.jobs = [
      JobDefinition(id: "dev.example.alerts", command: ["/bin/true"], schedule: .once(delay: .zero))
    ]
    watch.configure(configuration)
    #expect(!watch.isWatching)
    configuration.alerts["dev.example.alerts"] = JobAlerts(alertAfter: Self.day)
    watch.configure(configuration)
    #expect(watch.isWatching)
  }

  @Test("a look reads every task first, then only those events named; a timer's look, none")
  func looksReadOnlyWhatChanged() async throws {
    let logger = Logger(label: "test.alerts")
    let reads = Lock<[Set<TaskId>?]>([])
    let clock = ManualClock()
    let ids = try (0..<3).map { try TaskId("dev.example.alerts-\($0)") }
    let watch = AlertWatch(
      clock: clock,
      read: { only in
        reads.withLock { $0.append(only) }
        let successes = ids.filter { only?.contains($0) ?? true }.map {
          TaskSuccess(id: $0, createdAt: clock.now.date, lastSuccessAt: nil, state: .pending)
        }
        return (successes, [])
      },
      hooks: nil, metrics: nil, logger: logger)
    var configuration = DaemonConfiguration(sourcePath: "/nonexistent")
    configuration.jobs = ids.map {
      JobDefinition(id: $0.rawValue, command: ["/bin/true"], schedule: .once(delay: .zero))
    }
    for id in ids { configuration.alerts[id.rawValue] = JobAlerts(alertAfter: Self.day) }
    watch.configure(configuration)
    await watch.look()
    watch.noteChange(ids[1])
    await watch.look()
    await watch.look()  // nothing changed: as when the staleness timer fires
    watch.noteChange(nil)
    await watch.look()
    watch.configure(configuration)
    watch.noteChange(ids[0])
    await watch.look()
    let expected: [Set<TaskId>?] = [nil, [ids[1]], nil, nil]
    #expect(reads.withLock { $0 } == expected)
    // What the partial look kept: every job, not only the one read again.
    clock.advance(by: Self.day * 2)
    await watch.look()
    #expect(watch.problems().compactMap(\.taskId) == ids)
  }

  @Test("a job failing past alert-after is stale once per episode, its hooks run once each")
  func staleOncePerEpisode() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("alerts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("store.sqlite").path
    let staleFile = directory.appendingPathComponent("stale.env").path
    let failureFile = directory.appendingPathComponent("failure.env").path
    let clock = ManualClock()
    let t0 = clock.now
    let id = try TaskId("dev.example.backup")
    let worker = SwitchWorker()
    let runtime = Backgrounder(
      configuration: Backgrounder.Configuration(storePath: storePath, clock: clock))
    try runtime.register(id) { worker }
    let events = runtime.events()
    try await runtime.start()
    let logger = Logger(label: "test.alerts")
    let watch = AlertWatch(
      clock: clock,
      read: { only in
        (
          try await runtime.storedSuccesses(of: only),
          try await runtime.storedTasks(historyLimit: 0, of: only)
        )
      },
      hooks: AlertHooks(runner: CommandRunner(logger: logger), logger: logger), metrics: nil,
      logger: logger)
    var configuration = DaemonConfiguration(sourcePath: directory.path)
    configuration.jobs = [
      JobDefinition(
        id: id.rawValue, command: ["/bin/true"], schedule: .every(Self.day * 2, flex: nil))
    ]
    configuration.alerts[id.rawValue] = JobAlerts(
      alertAfter: Self.day * 3, onFailure: Self.hook(writingTo: failureFile),
      onStale: Self.hook(writingTo: staleFile))
    watch.configure(configuration)
    await watch.look()  // before the first run: its failure is a new one
    let watching = Task { await watch.run(events: events) }

    #expect(
      await runtime.schedule(WorkRequest.Periodic(taskId: id, interval: Self.day * 2)) == .scheduled
    )
    // Runs at t0 and t0 + 2 d fail: one on-failure hook each.
    try #require(await eventually { Self.blocks(failureFile).count == 1 ? true : nil } != nil)
    let failure = Self.blocks(failureFile)[0]
    #expect(failure["BACKGROUNDER_TASK_ID"] == id.rawValue)
    #expect(failure["BACKGROUNDER_RESULT"] == "failure")
    #expect(failure["BACKGROUNDER_REASON"] == "exit status 1: disk full")
    #expect(failure["BACKGROUNDER_LAST_SUCCESS"] == "")
    clock.advance(to: t0.advanced(by: Self.day * 2))
    #expect(await eventually { Self.blocks(failureFile).count == 2 ? true : nil } != nil)
    #expect(Self.blocks(staleFile).isEmpty)
    #expect(watch.problems().isEmpty)

    // t0 + 3 d: stale, woken by the watch's own timer; the on-stale hook runs once.
    clock.advance(to: t0.advanced(by: Self.day * 3))
    #expect(await eventually { Self.blocks(staleFile).count == 1 ? true : nil } != nil)
    let stale = Self.blocks(staleFile)[0]
    #expect(stale["BACKGROUNDER_TASK_ID"] == id.rawValue)
    #expect(stale["BACKGROUNDER_RESULT"] == "stale")
    #expect(
      stale["BACKGROUNDER_REASON"]?.hasPrefix("no success for 3 d: failing with exit status 1")
        == true)
    #expect(stale["BACKGROUNDER_LAST_SUCCESS"] == "")
    let problems = watch.problems()
    #expect(problems.map(\.kind) == [.jobStale] && problems.first?.taskId == id)
    // `doctor` reports the daemon's health problems as problems (exit status 1).
    #expect(DaemonHealth.findings((problems, nil)).contains { $0.severity == .problem })

    // Another failure while stale: its on-failure hook, but no second on-stale hook.
    clock.advance(to: t0.advanced(by: Self.day * 4))
    #expect(await eventually { Self.blocks(failureFile).count == 3 ? true : nil } != nil)
    #expect(Self.blocks(staleFile).count == 1)
    #expect(watch.problems().count == 1)

    // A success ends the episode.
    worker.succeeds.withLock { $0 = true }
    clock.advance(to: t0.advanced(by: Self.day * 6))
    #expect(await eventually { watch.problems().isEmpty ? true : nil } != nil)
    let successes = try TaskStoreReader(path: storePath).successes()
    #expect(successes.first?.lastSuccessAt == t0.advanced(by: Self.day * 6).date)

    // Failing again: a new episode 3 d after that success, with its time.
    worker.succeeds.withLock { $0 = false }
    clock.advance(to: t0.advanced(by: Self.day * 8))
    #expect(await eventually { Self.blocks(failureFile).count == 4 ? true : nil } != nil)
    #expect(Self.blocks(staleFile).count == 1)
    clock.advance(to: t0.advanced(by: Self.day * 9))
    // Required: the check after it reads the second block (an expectation would go on and
    // index past the end, and the crash would end every test of the run).
    try #require(await eventually { Self.blocks(staleFile).count == 2 ? true : nil } != nil)
    #expect(
      Self.blocks(staleFile)[1]["BACKGROUNDER_LAST_SUCCESS"]
        == ISO8601.string(t0.advanced(by: Self.day * 6).date))

    await runtime.shutdown()
    await watching.value
  }

  @Test("retries exhausted run the on-failure hook once; a retry with attempts left does not")
  func retriesExhausted() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("alerts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let failureFile = directory.appendingPathComponent("failure.env").path
    let clock = ManualClock()
    let id = try TaskId("dev.example.flaky")
    let runtime = Backgrounder(
      configuration: Backgrounder.Configuration(
        storePath: directory.appendingPathComponent("store.sqlite").path, clock: clock))
    try runtime.register(id) { ClosureWorker { _ in .retry(reason: "exit 75: server busy") } }
    let events = runtime.events()
    try await runtime.start()
    let logger = Logger(label: "test.alerts")
    let watch = AlertWatch(
      clock: clock,
      read: { only in
        (
          try await runtime.storedSuccesses(of: only),
          try await runtime.storedTasks(historyLimit: 0, of: only)
        )
      },
      hooks: AlertHooks(runner: CommandRunner(logger: logger), logger: logger), metrics: nil,
      logger: logger)
    var configuration = DaemonConfiguration(sourcePath: directory.path)
    configuration.jobs = [
      JobDefinition(id: id.rawValue, command: ["/bin/true"], schedule: .once(delay: .zero))
    ]
    configuration.alertDefaults = JobAlerts(onFailure: Self.hook(writingTo: failureFile))
    watch.configure(configuration)
    await watch.look()
    let watching = Task { await watch.run(events: events) }

    let backoff = BackoffPolicy(
      kind: .linear, initialDelay: .seconds(30), maxAttempts: 2, jitter: 0)
    #expect(await runtime.schedule(WorkRequest.OneTime(taskId: id, backoff: backoff)) == .scheduled)
    try await waitForRetry(id, runtime)
    #expect(Self.blocks(failureFile).isEmpty, "a retry with attempts left is no failure")
    clock.advance(by: .seconds(30))
    #expect(await eventually { Self.blocks(failureFile).count == 1 ? true : nil } != nil)
    #expect(
      Self.blocks(failureFile)[0]["BACKGROUNDER_REASON"]?.contains("retries exhausted") == true)
    #expect(Self.blocks(failureFile)[0]["BACKGROUNDER_RESULT"] == "failure")

    await runtime.shutdown()
    await watching.value
    #expect(Self.blocks(failureFile).count == 1)
  }

  /// Waits until `id`'s first attempt is recorded as a retry.
  private func waitForRetry(_ id: TaskId, _ runtime: Backgrounder) async throws {
    let retried = try await TestSupport.eventually {
      try await runtime.storedTasks(historyLimit: 0).first(where: { $0.id == id })?.lastResult
        == .retry ? true : nil
    }
    if retried == nil { Issue.record("no retry recorded") }
  }

  /// A hook that appends its environment and a `---` line to `file`.
  private static func hook(writingTo file: String) -> [String] {
    ["/bin/sh", "-c", "/usr/bin/env >> \"$0\"; echo --- >> \"$0\"", file]
  }

  /// The environments the hook wrote to `file`, one per run.
  private static func blocks(_ file: String) -> [[String: String]] {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return [] }
    var blocks: [[String: String]] = []
    var current: [String: String] = [:]
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line == "---" {
        blocks.append(current)
        current = [:]
      } else if let equals = line.firstIndex(of: "=") {
        current[String(line[..<equals])] = String(line[line.index(after: equals)...])
      }
    }
    return blocks
  }

  /// Polls `probe` every 20 ms for up to 10 s.
}
