import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// Migration `fewer-pages-per-run`: no index on `task.state`, `run` and `run_network_bytes`
/// without `AUTOINCREMENT` (issue #35: 3 to 4 of the pages a run's commit wrote were for nothing).
@Suite(.timeLimit(.minutes(3)))
struct RunPagesMigrationTests {
  static let before = "calendar-as-lines"
  static let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  @Test("a store made before it keeps its runs, their ids and bytes; new runs follow them")
  func olderStoreIsRebuilt() throws {
    let job = try TaskId("dev.example.pages")
    let (directory, path, queue) = try Self.olderStoreInTemporaryDirectory(holding: job)
    defer { try? FileManager.default.removeItem(at: directory) }
    defer { try? queue.close() }
    let runs = "SELECT * FROM run ORDER BY id"
    let bytes = "SELECT * FROM run_network_bytes ORDER BY id"
    let (runsBefore, bytesBefore) = try queue.write { db in
      for (attempt, outcome) in ["success", "failure", "retry"].enumerated() {
        try TaskStore.apply(
          [
            .appendRun(
              RunRow(
                taskId: job, attempt: attempt, startedAt: Self.now, endedAt: Self.now,
                outcome: outcome, reason: "reason \(attempt)", conditions: "net",
                outputTail: "tail", stop: nil)),
            .recordNetworkBytes(
              RunNetworkRecord(
                taskId: job, attempt: attempt, startedAt: Self.now, at: Self.now,
                bytes: RunNetworkBytes(
                  sent: 10, received: 20, meteredSent: 1, meteredReceived: 2,
                  accounting: .link))),
          ], in: db, historyLimit: 10)
      }
      return (try Row.fetchAll(db, sql: runs), try Row.fetchAll(db, sql: bytes))
    }
    #expect(runsBefore.count == 3)
    #expect(try Self.schema(queue)["run"]?.contains("AUTOINCREMENT") == true)

    try Schema.migrator.migrate(queue)

    let schema = try Self.schema(queue)
    for table in ["run", "run_network_bytes"] {
      let sql = try #require(schema[table])
      #expect(!sql.contains("AUTOINCREMENT"), "\(sql)")
    }
    #expect(schema["task_state"] == nil)
    for name in ["run_task", "run_network_bytes_at", "run_network_bytes_task", "run_success"] {
      #expect(schema[name] != nil, "\(name) made again")
    }
    try queue.write { db in
      #expect(try Row.fetchAll(db, sql: runs) == runsBefore)
      #expect(try Row.fetchAll(db, sql: bytes) == bytesBefore)
      let later = Self.now.advanced(by: .seconds(60))
      try TaskStore.apply(
        [
          .appendRun(
            RunRow(
              taskId: job, attempt: 3, startedAt: later, endedAt: later, outcome: "success",
              reason: nil))
        ], in: db, historyLimit: 10)
      #expect(try Int64.fetchOne(db, sql: "SELECT max(id) FROM run") == 4)
      // The trigger made again records the last success.
      #expect(
        try Int64.fetchOne(db, sql: "SELECT lastSuccessAt FROM task_success")
          == later.nanosecondsSince1970)
    }
    let history = try TaskStoreReader(path: path).task(job)?.recentRuns ?? []
    #expect(history.map(\.attempt) == [3, 2, 1, 0])
    #expect(history.dropFirst().allSatisfy { $0.network?.sent == 10 })
  }

  @Test("the WAL that the migration grew is given back when the store opens")
  func walIsGivenBack() throws {
    let job = try TaskId("dev.example.wal")
    let (directory, path, queue) = try Self.olderStoreInTemporaryDirectory(holding: job)
    defer { try? FileManager.default.removeItem(at: directory) }
    try queue.write { db in
      let runs = (0..<3000).map { attempt in
        StoreOp.appendRun(
          RunRow(
            taskId: job, attempt: attempt, startedAt: Self.now, endedAt: Self.now,
            outcome: "failure", reason: String(repeating: "x", count: 200)))
      }
      try TaskStore.apply(runs, in: db, historyLimit: 5000)
    }
    try queue.close()
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5000)
    defer { try? store.close() }
    let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
    #expect(wal == 0, "\(wal ?? -1) bytes of WAL after the rebuild of 3,000 runs")
    #expect(
      try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM run") } == 3000)
  }

  @Test("a run's end and the next claim write at least 3 fewer pages than before")
  func fewerPages() throws {
    let before = try Self.pagesPerRun(migratedUpTo: Self.before)
    let after = try Self.pagesPerRun(migratedUpTo: nil)
    #expect(after + 3 <= before, "\(before) pages before, \(after) after")
  }

  /// The WAL frames one commit writes in a store of 1,000 tasks: a run's outcome, its bytes and
  /// the next task's start, the transaction the daemon commits when a run ends.
  static func pagesPerRun(migratedUpTo version: String?) throws -> Int {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let queue = try DatabaseQueue(path: directory.appendingPathComponent("store.sqlite").path)
    defer { try? queue.close() }
    if let version {
      try Schema.migrator.migrate(queue, upTo: version)
    } else {
      try Schema.migrator.migrate(queue)
    }
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA journal_mode = WAL")
      try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
    }
    let rows = try (0..<1000).map { index in
      TaskRow(
        request: .oneTime(WorkRequest.OneTime(taskId: try TaskId("dev.example.t\(index)"))),
        input: Data(repeating: 0x61, count: 500), now: now)
    }
    try queue.write { db in
      try TaskStore.apply(rows.map(StoreOp.upsert), in: db, historyLimit: 10)
    }
    var frames: [Int] = []
    for index in 500..<510 {
      var ended = rows[index]
      ended.state = .succeeded
      ended.lastRunEndedAt = now
      var started = rows[index + 1]
      started.state = .running
      started.lastRunStartedAt = now
      let run = RunRow(
        taskId: ended.id, attempt: 0, startedAt: now, endedAt: now, outcome: "success",
        reason: nil)
      let counted = RunNetworkRecord(
        taskId: ended.id, attempt: 0, startedAt: now, at: now,
        bytes: RunNetworkBytes(
          sent: 0, received: 0, meteredSent: 0, meteredReceived: 0, accounting: .link))
      let log = try queue.writeWithoutTransaction { db in
        _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        try db.inTransaction {
          try TaskStore.apply(
            [.upsert(ended), .appendRun(run), .recordNetworkBytes(counted), .markStarted(started)],
            in: db, historyLimit: 10)
          return .commit
        }
        return try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)").map { $0[1] as Int }
      }
      frames.append(log ?? 0)
    }
    return frames.sorted()[frames.count / 2]
  }

  /// A store in a new temporary directory as a daemon left it before the migration, holding
  /// `job`.
  static func olderStoreInTemporaryDirectory(holding job: TaskId) throws -> (
    URL, String, DatabaseQueue
  ) {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    return (directory, path, try olderStore(at: path, upTo: before, holding: job, now: now))
  }

  /// Each table's, index's and trigger's SQL, by name.
  static func schema(_ queue: DatabaseQueue) throws -> [String: String] {
    try queue.read { db in
      let rows = try Row.fetchAll(
        db, sql: "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL")
      return Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) })
    }
  }
}
