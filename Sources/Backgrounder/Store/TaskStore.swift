import Foundation
import GRDB

/// How hard each commit pushes data to disk.
public enum StoreDurability: String, Hashable, Sendable, Codable {
  /// `synchronous=FULL`: a commit survives power loss (fsync per commit).
  case full
  /// `synchronous=NORMAL`: a commit survives the process dying; the last commits may be lost
  /// on power loss. Faster.
  case normal
}

/// The read/write store: one `DatabasePool` (WAL) per file, owned by one `Backgrounder`.
final class TaskStore: Sendable {
  let path: String
  let pool: DatabasePool
  private let historyLimit: Int

  private init(path: String, pool: DatabasePool, historyLimit: Int) {
    self.path = path
    self.pool = pool
    self.historyLimit = historyLimit
  }

  /// Opens (creating if needed) and migrates the store at `path`.
  static func open(path: String, durability: StoreDurability, historyLimit: Int) throws
    -> TaskStore
  {
    do {
      // Check an existing file read-only first: opening a pool writes to the file (GRDB makes
      // sure a WAL file exists), and a file we do not understand must stay untouched.
      if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int,
        size > 0
      {
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(5)
        let queue = try DatabaseQueue(path: path, configuration: readOnly)
        defer { try? queue.close() }
        try queue.read { db in try Schema.check(db, path: path) }
      }
      var configuration = Configuration()
      configuration.busyMode = .timeout(5)
      configuration.label = "backgrounder-store"
      let pool = try DatabasePool(path: path, configuration: configuration)
      let synchronous = durability == .full ? "FULL" : "NORMAL"
      // After the pool's own WAL setup, which sets NORMAL on the single writer connection.
      try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
      }
      try pool.read { db in try Schema.check(db, path: path) }
      try Schema.migrator.migrate(pool)
      return TaskStore(path: path, pool: pool, historyLimit: historyLimit)
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// Removes ephemeral work and finished one-time tasks older than `finishedBefore`;
  /// returns the ephemeral ids removed.
  func sweep(finishedBefore: WallInstant) throws -> [TaskId] {
    do {
      return try pool.write { db in
        let finished = "('\(TaskState.succeeded.rawValue)', '\(TaskState.failed.rawValue)')"
        let ephemeral = try String.fetchAll(
          db, sql: "SELECT id FROM task WHERE ephemeral = 1 AND state NOT IN \(finished)")
        try db.execute(
          sql: """
            DELETE FROM task WHERE (ephemeral = 1 AND state NOT IN \(finished))
              OR (state IN \(finished) AND updatedAt < ?)
            """, arguments: [finishedBefore.nanosecondsSince1970])
        try db.execute(sql: "DELETE FROM run WHERE taskId NOT IN (SELECT id FROM task)")
        return ephemeral.map(TaskId.init(validated:))
      }
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// The active (not finished) tasks.
  func loadActive() throws -> [TaskRow] {
    do {
      return try pool.read { db in
        let sql = """
          SELECT \(TaskRow.columns.joined(separator: ", ")) FROM task
          WHERE state NOT IN ('\(TaskState.succeeded.rawValue)', '\(TaskState.failed.rawValue)')
          """
        let cursor = try Row.fetchCursor(db, sql: sql)
        var rows: [TaskRow] = []
        while let row = try cursor.next() { rows.append(try TaskRow(row: row)) }
        return rows
      }
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// Applies `ops` in one transaction, on a thread of its own: the commit blocks (fsync) and
  /// must stay off the Swift concurrency pool, and GRDB's `async` write would run it on a
  /// Dispatch worker thread, which stays alive and wakes again 5 s after every commit.
  func apply(_ ops: [StoreOp]) async throws {
    let (pool, limit) = (self.pool, historyLimit)
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
      Thread {
        done.resume(
          with: Result { try pool.write { db in try Self.apply(ops, in: db, historyLimit: limit) } }
        )
      }.start()
    }
  }

  private static let upsertSQL =
    "INSERT OR REPLACE INTO task (\(TaskRow.columns.joined(separator: ", "))) VALUES ("
    + Array(repeating: "?", count: TaskRow.columns.count).joined(separator: ", ") + ")"

  static func apply(_ ops: [StoreOp], in db: Database, historyLimit: Int) throws {
    for op in ops {
      switch op {
      case .upsert(let row):
        try db.cachedStatement(sql: upsertSQL).execute(arguments: row.arguments)
      case .delete(let id):
        try db.cachedStatement(sql: "DELETE FROM task WHERE id = ?").execute(
          arguments: [id.rawValue])
        try db.cachedStatement(sql: "DELETE FROM run WHERE taskId = ?").execute(
          arguments: [id.rawValue])
      case .deleteAll:
        try db.execute(sql: "DELETE FROM task; DELETE FROM run")
      case .appendRun(let run):
        try db.cachedStatement(
          sql:
            "INSERT INTO run (taskId, attempt, startedAt, endedAt, outcome, reason) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [
          run.taskId.rawValue, run.attempt, run.startedAt?.nanosecondsSince1970,
          run.endedAt.nanosecondsSince1970, run.outcome, run.reason,
        ])
        try db.cachedStatement(
          sql: """
            DELETE FROM run WHERE taskId = ?1 AND id <= (
              SELECT id FROM run WHERE taskId = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
            """
        ).execute(arguments: [run.taskId.rawValue, historyLimit])
      }
    }
  }

  /// Folds the WAL into the database file and closes the pool.
  func close() throws {
    _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    try pool.close()
  }
}
