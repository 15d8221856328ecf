import BackgrounderTesting
import Foundation
import GRDB
import Locking
import Testing

@testable import Backgrounder

/// The store writer's group commit: claims and completions share transactions, yet nothing is
/// acknowledged (worker invoked, event delivered, `schedule` returned) before it is committed
/// to the file, and every completion is recorded exactly once.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct GroupCommitTests {
  @Test("a completion is delivered only after its commit: the reopened file already holds it")
  func completionAcknowledgedAfterCommit() async throws {
    let job = id("test.group.completion")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    await worker.waitUntilInvoked()
    // The claim was committed before the worker ran.
    #expect(try TaskStoreReader(path: h.storePath).task(job)?.state == .running)

    // Another connection holds the write lock: the completion cannot commit until it ends.
    var holdsTransaction = Configuration()
    holdsTransaction.allowsUnsafeTransactions = true
    let blocker = try DatabaseQueue(path: h.storePath, configuration: holdsTransaction)
    defer { try? blocker.close() }
    try blocker.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
    worker.release()
    try await Task.sleep(for: .milliseconds(300))
    #expect(
      h.events(job) { $0.isWorkCompleted }.isEmpty,
      "the completion was delivered while its commit was blocked")
    try blocker.inDatabase { db in try db.execute(sql: "ROLLBACK") }

    await h.waitFor(job) { $0.isWorkCompleted }
    // Read right after the event by a fresh connection to the file, without any flush.
    let stored = try #require(try TaskStoreReader(path: h.storePath).task(job))
    #expect(stored.state == .succeeded && stored.lastResult == .success)
    #expect(stored.recentRuns.map(\.outcome) == ["success"])
  }

  /// A worker's ``WorkContext/recordNetworkBytes(_:)`` is stored with its outcome: once the
  /// completion is delivered (after its commit), the bytes are in the file, with the run; and
  /// ``Backgrounder/recordNetworkBytes(_:)`` returns once its record is committed.
  @Test("a run's bytes are committed with its outcome; recordNetworkBytes returns committed")
  func networkBytesCommitWithTheOutcome() async throws {
    let job = id("test.group.bytes")
    let bytes = RunNetworkBytes(
      sent: 300, received: 40, meteredSent: 0, meteredReceived: 0, accounting: .link)
    let clock = ManualClock()
    let worker = BytesWorker(bytes: bytes, at: clock.date)
    let h = try await Harness.start(workers: [job: worker], clock: clock)
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    await h.waitFor(job) { $0.isWorkCompleted }
    let stored = try #require(try TaskStoreReader(path: h.storePath).task(job))
    #expect(stored.recentRuns.map(\.network) == [bytes])
    let later = RunNetworkRecord(
      taskId: job, attempt: 1, startedAt: WallInstant(h.clock.date), at: WallInstant(h.clock.date),
      bytes: bytes)
    try await h.backgrounder.recordNetworkBytes(later)
    let all = try await h.backgrounder.networkBytes(
      after: WallInstant(h.clock.date.addingTimeInterval(-3600)))
    #expect(all.count == 2 && all.contains(later), "\(all)")
  }

  struct BytesWorker: Worker {
    let bytes: RunNetworkBytes
    /// The test clock's time (the run's start and end: it does not move).
    let at: Date
    func execute(_ context: WorkContext) async -> WorkResult {
      context.recordNetworkBytes(
        RunNetworkRecord(
          taskId: context.taskId, attempt: context.attempt, startedAt: WallInstant(at),
          at: WallInstant(at), bytes: bytes))
      return .success
    }
  }

  @Test("the claims of all due tasks are one transaction, durable before any worker runs")
  func dueClaimsShareOneTransaction() async throws {
    let jobs = (0..<8).map { id("test.group.claim.n\($0)") }
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let clock = ManualClock()
    let first = try await Harness.start(
      workers: Dictionary(uniqueKeysWithValues: jobs.map { ($0, RecordingWorker() as any Worker) }),
      directory: directory, clock: clock, dispatchesWork: false)
    for job in jobs {
      #expect(await first.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    }
    await first.stop(removeFiles: false)

    let path = first.storePath
    let seenRunning = Lock<[Int]>([])
    let worker = ClosureWorker { _ in
      let running = try? TaskStoreReader(path: path).tasks().filter { $0.state == .running }.count
      seenRunning.withLock { $0.append(running ?? -1) }
      return .success
    }
    let h = try await Harness.start(
      workers: Dictionary(uniqueKeysWithValues: jobs.map { ($0, worker as any Worker) }),
      concurrencyLimit: jobs.count, directory: directory, clock: clock)
    await h.recorder.wait(count: jobs.count) { $0.kind.isWorkCompleted }
    // The first worker to run already sees every claim on disk.
    #expect(seenRunning.withLock { $0.max() } == jobs.count)
    let starts = h.recorder.events { $0.kind.isWorkStarted }.count
    #expect(starts == jobs.count)
    let diagnostics = h.backgrounder.diagnostics()
    #expect(
      diagnostics.storeCommits <= 1 + jobs.count,
      "one commit for the claims, at most one per completion: \(diagnostics.storeCommits)")
  }

  @Test("concurrent completions are each recorded exactly once and share commits")
  func concurrentCompletionsExactlyOnce() async throws {
    let jobs = (0..<200).map { id("test.group.many.n\($0)") }
    let worker = ClosureWorker { _ in
      try? await Task.sleep(for: .milliseconds(Int.random(in: 0...3)))
      return .success
    }
    let h = try await Harness.start(
      workers: Dictionary(uniqueKeysWithValues: jobs.map { ($0, worker as any Worker) }),
      concurrencyLimit: 16)
    await h.scheduleAllAndWaitForCompletion(jobs)
    let completedEvents = Dictionary(
      grouping: h.recorder.events { $0.kind.isWorkCompleted }.compactMap(\.taskId), by: { $0 })
    #expect(
      completedEvents.count == jobs.count && completedEvents.values.allSatisfy { $0.count == 1 })

    let queue = try DatabaseQueue(path: h.storePath)
    defer { try? queue.close() }
    let runs = try queue.read { db in
      try Row.fetchAll(db, sql: "SELECT taskId, outcome FROM run")
    }
    let perTask = Dictionary(grouping: runs, by: { $0["taskId"] as String })
    #expect(perTask.count == jobs.count)
    #expect(perTask.values.allSatisfy { $0.count == 1 && $0[0]["outcome"] as String == "success" })
    let succeeded = try await queue.read { db in
      try Int.fetchOne(db, sql: "SELECT count(*) FROM task WHERE state = 'succeeded'")
    }
    #expect(succeeded == jobs.count)
    // 200 schedules, 200 claims and 200 completions: grouped into far fewer transactions.
    let commits = h.backgrounder.diagnostics().storeCommits
    #expect(commits < jobs.count, "\(commits) commits")
  }

  @Test("an upsert followed by another of the same task in one batch is written once")
  func repeatedUpsertWrittenOnce() throws {
    let (store, directory) = try Self.newStore()
    defer {
      try? store.close()
      try? FileManager.default.removeItem(at: directory)
    }
    let (scheduled, claimed) = Self.rows("test.group.upsert")
    let now = Self.now
    let run = RunRow(
      taskId: scheduled.id, attempt: 0, startedAt: now, endedAt: now, outcome: "success",
      reason: nil)
    let changes = try store.pool.write { db in
      let before = db.totalChangesCount
      try TaskStore.apply(
        [.upsert(scheduled), .appendRun(run), .upsert(claimed)], in: db, historyLimit: 5)
      return db.totalChangesCount - before
    }
    // The success also writes the task's last success (the `run_success` trigger).
    #expect(changes == 3, "one task row, one run row and one last-success row written")
    let stored = try store.pool.read { db in try TaskRow.fetchOne(db, key: scheduled.id.rawValue) }
    #expect(stored == claimed)
  }

  @Test(
    "a start mark after an upsert of a new task in one batch writes the whole row, across enqueues too"
  )
  func startMarkAfterUpsertWritesTheRow() throws {
    let (store, directory) = try Self.newStore()
    defer {
      try? store.close()
      try? FileManager.default.removeItem(at: directory)
    }
    let alone = Self.rows("test.group.mark-one")
    let split = Self.rows("test.group.mark-two")
    let replaced = Self.rows("test.group.mark-three")
    var later = replaced.claimed
    later.state = .succeeded
    let statements = WriterStatements()
    let changes = try store.pool.write { db in
      let before = db.totalChangesCount
      // Only a start mark's columns would be an UPDATE of a row that is not there yet.
      try TaskStore.apply(
        chunks: [
          [.upsert(alone.scheduled), .markStarted(alone.claimed), .upsert(split.scheduled)],
          [.markStarted(split.claimed)],
          [.markStarted(replaced.claimed), .upsert(later)],
        ], in: db, historyLimit: 5, statements: statements)
      statements.clear()
      return db.totalChangesCount - before
    }
    #expect(changes == 3, "one write per task")
    let stored = try store.pool.read { db in
      try [alone.claimed.id, split.claimed.id, later.id].map {
        try TaskRow.fetchOne(db, key: $0.rawValue)
      }
    }
    #expect(stored == [alone.claimed, split.claimed, later])
  }

  @Test("the writer binds text as it is: empty is not NULL, non-ASCII and long text round-trip")
  func boundTextRoundTrips() throws {
    let (store, directory) = try Self.newStore()
    defer {
      try? store.close()
      try? FileManager.default.removeItem(at: directory)
    }
    let row = Self.rows("test.group.text").scheduled
    let now = Self.now
    let reasons = ["", "é", "exit 1: déjà vu — 終わり", String(repeating: "long reason ", count: 50)]
    let ops: [StoreOp] =
      [.upsert(row)]
      + reasons.map {
        .appendRun(
          RunRow(
            taskId: row.id, attempt: 0, startedAt: now, endedAt: now, outcome: "failure",
            reason: $0))
      }
    _ = try store.write([ops])
    let stored = try store.pool.read { db in
      try Row.fetchAll(db, sql: "SELECT reason, typeof(reason) AS type FROM run ORDER BY id")
    }
    #expect(stored.map { $0["reason"] as String? } == reasons)
    #expect(stored.map { $0["type"] as String } == Array(repeating: "text", count: reasons.count))
  }

  private static let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  /// A store (history of 5 runs) in a new temporary directory, and the directory to remove.
  private static func newStore() throws -> (TaskStore, URL) {
    let directory = temporaryDirectory()
    let store = try TaskStore.open(
      path: directory.appendingPathComponent("store.sqlite").path, durability: .full,
      historyLimit: 5)
    return (store, directory)
  }

  /// Task `name`'s row as scheduled at ``now``, and as claimed (its run started) then.
  private static func rows(_ name: String) -> (scheduled: TaskRow, claimed: TaskRow) {
    let scheduled = TaskRow(
      request: .oneTime(WorkRequest.OneTime(taskId: id(name))), input: Data(), now: now)
    var claimed = scheduled
    claimed.state = .running
    claimed.lastRunStartedAt = now
    return (scheduled, claimed)
  }
}
