import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import TestSupport
import Testing

/// A real child process runs a worker, is killed with SIGKILL mid-run, and a new runtime on the
/// same store must lose nothing: the interrupted run becomes a counted retry, the periodic
/// cadence and the not-yet-due one-time task survive.
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct ResurrectionTests {
  private let blocking = try! TaskId("test.resurrect.blocking")
  private let periodic = try! TaskId("test.resurrect.periodic")
  private let later = try! TaskId("test.resurrect.later")

  /// The child executable built beside the test binary.
  static func childExecutable() throws -> URL {
    var candidates: [URL] = []
    if let override = ProcessInfo.processInfo.environment["RESURRECTION_CHILD"] {
      candidates.append(URL(fileURLWithPath: override))
    }
    let argv0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = argv0.deletingLastPathComponent()
    for _ in 0..<4 {
      candidates.append(directory.appendingPathComponent("ResurrectionChild"))
      directory = directory.deletingLastPathComponent()
    }
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }
    ) {
      return found
    }
    throw ChildError.notFound(candidates.map(\.path))
  }

  enum ChildError: Error {
    case notFound([String])
    case exitedEarly(String)
  }

  /// Reads the child's stdout until a line starts with `prefix` (blocking reads on a
  /// dedicated thread; the child is another process).
  static func waitForLine(_ handle: FileHandle, prefix: String) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        var buffer = ""
        while true {
          let data = handle.availableData
          if data.isEmpty {
            continuation.resume(throwing: ChildError.exitedEarly(buffer))
            return
          }
          buffer += String(decoding: data, as: UTF8.self)
          if let line = buffer.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
            continuation.resume(returning: String(line))
            return
          }
        }
      }
    }
  }

  @Test("SIGKILL mid-run loses nothing: the interrupted run becomes a counted retry")
  func sigkillMidRun() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "bg-resurrect-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("store.sqlite").path

    let child = Process()
    child.executableURL = try Self.childExecutable()
    child.arguments = [storePath]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let line = try await Self.waitForLine(output.fileHandleForReading, prefix: "RUNNING")
    #expect(line == "RUNNING attempt=0")
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    #expect(child.terminationReason == .uncaughtSignal)
    #expect(child.terminationStatus == SIGKILL)

    // What the dead process left behind, read-only.
    let orphaned = try #require(try TaskStoreReader(path: storePath).task(blocking))
    #expect(orphaned.state == .running)
    let periodicBefore = try #require(try TaskStoreReader(path: storePath).task(periodic))
    let laterBefore = try #require(try TaskStoreReader(path: storePath).task(later))

    let clock = ManualClock(now: Date())
    let worker = RecordingWorker(.success)
    let backgrounder = Backgrounder(
      configuration: .init(storePath: storePath, clock: clock, durability: .normal))
    try backgrounder.register(blocking) { worker }
    try backgrounder.register(periodic) { RecordingWorker(.success) }
    try backgrounder.register(later) { RecordingWorker(.success) }
    let recorder = EventRecorder(backgrounder)
    try await backgrounder.start()
    let restartedAt = clock.date

    await recorder.wait { $0.taskId == blocking && $0.kind == .attemptFailed(reason: .interrupted) }
    let retry = await recorder.wait { event in
      guard event.taskId == blocking, case .retryScheduled = event.kind else { return false }
      return true
    }
    #expect(retry[0].kind == .retryScheduled(nextAttempt: 1, delay: .seconds(20)))
    await TestDriver(backgrounder).flush()
    let reader = try TaskStoreReader(path: storePath)
    let resurrected = try #require(try reader.task(blocking, now: clock.date))
    #expect(resurrected.state == .backoff)
    #expect(resurrected.attempt == 1)
    #expect(resurrected.lastResult == .retry)
    #expect(resurrected.lastReason?.contains("interrupted") == true)
    #expect(resurrected.recentRuns.first?.outcome == "interrupted")
    #expect(resurrected.recentRuns.first?.startedAt == orphaned.lastRunStartedAt)

    // Nothing else was lost: the periodic cadence and the future one-time task are intact.
    let periodicAfter = try #require(try reader.task(periodic, now: clock.date))
    #expect(periodicAfter.nextRun == periodicBefore.nextRun)
    #expect(periodicAfter.lastResult == .success)
    #expect(periodicAfter.recentRuns.map(\.outcome) == ["success"])
    let laterAfter = try #require(try reader.task(later, now: clock.date))
    #expect(laterAfter.state == .pending)
    #expect(laterAfter.nextRun == laterBefore.nextRun)
    #expect(Set(backgrounder.scheduled().map(\.taskId)) == [blocking, periodic, later])

    // The retry runs after its backoff, as attempt 1.
    await clock.waitForSleepers(until: restartedAt.addingTimeInterval(20))
    clock.advance(by: .seconds(20))
    await recorder.wait { event in
      guard event.taskId == blocking, case .workCompleted = event.kind else { return false }
      return true
    }
    #expect(worker.attempts == [1])
    await backgrounder.shutdown()
    #expect(try reader.task(blocking)?.state == .succeeded)
  }
}

extension ResurrectionTests {
  @Test("SIGKILL between a batched claim and its run: claims never started run once, at attempt 0")
  func sigkillBetweenClaimAndRun() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "bg-resurrect-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let storePath = directory.appendingPathComponent("store.sqlite").path
    let blocker = try TaskId("test.ahead.blocker")
    let queued = try (0..<5).map { try TaskId("test.ahead.queued.n\($0)") }

    let child = Process()
    child.executableURL = try Self.childExecutable()
    child.arguments = [storePath, "claim-ahead"]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    let line = try await Self.waitForLine(output.fileHandleForReading, prefix: "CLAIMED")
    #expect(line == "CLAIMED")
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    #expect(child.terminationReason == .uncaughtSignal)

    // The dead process left six claims: one invoked (a start time), five never started.
    let left = try TaskStoreReader(path: storePath).tasks()
    #expect(left.count == 6 && left.allSatisfy { $0.state == .running })
    #expect(left.filter { $0.lastRunStartedAt == nil }.map(\.id).sorted() == queued)

    let clock = ManualClock(now: Date())
    let worker = RecordingWorker(.success)
    let backgrounder = Backgrounder(
      configuration: .init(storePath: storePath, clock: clock, durability: .normal))
    try backgrounder.register(blocker) { RecordingWorker(.success) }
    try backgrounder.register(queued) { _ in worker }
    let recorder = EventRecorder(backgrounder)
    try await backgrounder.start()
    await recorder.wait(count: queued.count) { event in
      guard let id = event.taskId, queued.contains(id), case .workCompleted = event.kind else {
        return false
      }
      return true
    }
    // Resumed at once, without using an attempt and without an "interrupted" run.
    #expect(worker.attempts == Array(repeating: 0, count: queued.count))
    await recorder.wait { $0.taskId == blocker && $0.kind == .attemptFailed(reason: .interrupted) }
    #expect(
      recorder.events { event in
        event.kind == .attemptFailed(reason: .interrupted) && event.taskId != blocker
      }.isEmpty)
    await TestDriver(backgrounder).flush()
    let reader = try TaskStoreReader(path: storePath)
    for id in queued {
      let status = try #require(try reader.task(id))
      #expect(status.state == .succeeded)
      #expect(status.recentRuns.map(\.outcome) == ["success"])
      #expect(status.recentRuns.first?.attempt == 0)
    }
    // The invoked one is an interrupted attempt, counted as before.
    #expect(try reader.task(blocker)?.attempt == 1)
    await backgrounder.shutdown()
  }
}

/// A worker that records the attempts it sees.
final class RecordingWorker: Worker {
  private let result: WorkResult
  private let seen = Lock<[Int]>([])

  init(_ result: WorkResult) {
    self.result = result
  }

  var attempts: [Int] { seen.withLock { $0 } }

  func execute(_ context: WorkContext) async -> WorkResult {
    seen.withLock { $0.append(context.attempt) }
    return result
  }
}
