import Foundation
import GRDB
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

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
  /// The path the file is opened and checked through.
  let path: String
  /// The path messages name (the configured one when `path` goes through a descriptor).
  let displayPath: String
  let pool: DatabasePool
  private let historyLimit: Int
  /// The file opened (device, inode); every write checks that `path` still names it.
  private let identity: FileIdentity?
  private let onReplaced: (@Sendable (StoreError) -> Void)?
  /// The read-only connection that checked an existing file, closed, kept as long as the store:
  /// releasing it would dispose of its Dispatch queue, and a disposal runs on a Dispatch worker
  /// thread, whose start arms libdispatch's workqueue monitor, a 1 s timer that never stops (an
  /// idle daemon restarted on its store woke every second).
  private let checkedReadOnly: DatabaseQueue?
  /// The statements of the writer's batches (``write(_:)``).
  private let writerStatements = WriterStatements()

  private init(
    path: String, displayPath: String, pool: DatabasePool, historyLimit: Int,
    identity: FileIdentity?, onReplaced: (@Sendable (StoreError) -> Void)?,
    checkedReadOnly: DatabaseQueue?
  ) {
    self.checkedReadOnly = checkedReadOnly
    self.path = path
    self.displayPath = displayPath
    self.pool = pool
    self.historyLimit = historyLimit
    self.identity = identity
    self.onReplaced = onReplaced
  }

  /// The most page cache each connection keeps, in KiB (SQLite's default is 2,000). A
  /// long-running process keeps its connections: with SQLite's default, the writer alone held
  /// the whole task table (1.2 MB with 1,000 tasks) for good (issue #11). Pages not cached
  /// are read again from the operating system's cache.
  static let pageCacheKibibytes = 512

  /// Opens (creating if needed, mode `0600`) and migrates the store at `path`. `onReplaced` is
  /// called (on the writing thread) each time a write is refused because `path` no longer
  /// names the opened file. Messages name `displayPath` (default: `path`).
  static func open(
    path: String, displayPath: String? = nil, durability: StoreDurability, historyLimit: Int,
    onReplaced: (@Sendable (StoreError) -> Void)? = nil
  ) throws -> TaskStore {
    let displayPath = displayPath ?? path
    do {
      try PrivateStoreFile.create(path)
    } catch {
      throw StoreError.openFailed(path: displayPath, detail: error.detail)
    }
    do {
      // Check an existing file read-only first: opening a pool writes to the file (GRDB makes
      // sure a WAL file exists), and a file we do not understand must stay untouched.
      var checkedReadOnly: DatabaseQueue?
      if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int,
        size > 0
      {
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(5)
        let queue = try DatabaseQueue(path: path, configuration: readOnly)
        checkedReadOnly = queue
        defer { try? queue.close() }
        try queue.read { db in try Schema.check(db, path: displayPath) }
      }
      var configuration = Configuration()
      configuration.busyMode = .timeout(5)
      configuration.label = "backgrounder-store"
      configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKibibytes)")
      }
      let pool = try DatabasePool(path: path, configuration: configuration)
      let synchronous = durability == .full ? "FULL" : "NORMAL"
      // After the pool's own WAL setup, which sets NORMAL on the single writer connection.
      try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
      }
      try pool.read { db in try Schema.check(db, path: displayPath) }
      let migrating = try pool.read { db in try !Schema.migrator.hasCompletedMigrations(db) }
      try Schema.migrator.migrate(pool)
      if migrating {
        // A migration that rebuilds tables grows the WAL by their size (78 MB for a year of a
        // job a minute), and SQLite keeps a WAL's size once grown: give it back now, not when
        // the daemon next stops. Readers in the way only leave it for later.
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
      }
      return TaskStore(
        path: path, displayPath: displayPath, pool: pool, historyLimit: historyLimit,
        identity: FileIdentity(path), onReplaced: onReplaced, checkedReadOnly: checkedReadOnly)
    } catch {
      throw Schema.storeError(error, path: displayPath)
    }
  }

  /// In one transaction: removes ephemeral work and finished one-time tasks older than
  /// `finishedBefore`, and reads the active (not finished) tasks. Returns the ephemeral ids
  /// removed and the active rows. A row that cannot be read rolls the whole transaction back,
  /// so a store with a corrupt value is left as it was.
  func sweepAndLoad(finishedBefore: WallInstant) throws -> (swept: [TaskId], active: [TaskRow]) {
    do {
      return try pool.write { db in
        let swept = try Self.sweep(db, finishedBefore: finishedBefore)
        let active = try TaskRow.fetchAllByName(
          db,
          TaskRow.filter(
            ![TaskState.succeeded.rawValue, TaskState.failed.rawValue].contains(
              TaskRow.Columns.state)))
        return (swept, active)
      }
    } catch {
      throw Schema.storeError(error, path: displayPath)
    }
  }

  private static func sweep(_ db: Database, finishedBefore: WallInstant) throws -> [TaskId] {
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

  /// Applies `ops` in one transaction on the calling thread (the writer's commit thread: the
  /// commit blocks on fsync). Returns whether any row changed (a transaction that changes
  /// nothing writes nothing, so it proves nothing about the disk). Throws
  /// ``StoreError/Code/replaced`` (the transaction rolled back) when `path` no longer names the
  /// opened file: what is committed to a deleted or replaced file is lost to its users.
  /// `chunks` are the enqueues of one batch, applied in order as one list (not joined into
  /// one: that copied every change once more).
  func write(_ chunks: [[StoreOp]]) throws -> Bool {
    try pool.write { db in
      let before = db.totalChangesCount
      try Self.apply(
        chunks: chunks, in: db, historyLimit: historyLimit, statements: writerStatements)
      try checkIdentity()
      return db.totalChangesCount != before
    }
  }

  // MARK: - Asynchronous access: the one way for async callers

  /// Reads with `body` on a short-lived thread of its own: not a thread of the concurrency
  /// pool, and not GRDB's `async` read, whose Dispatch worker arms libdispatch's workqueue
  /// monitor (a 1 s timer that never stops).
  func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
    let pool = self.pool
    return try await SystemThread.runBlocking(name: "bg-store-read") { try pool.read(body) }
  }

  /// Writes with `body` in one transaction on a short-lived thread of its own, checked like
  /// every write: rolled back with ``StoreError/Code/replaced`` when `path` no longer names the
  /// opened file.
  func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
    try await SystemThread.runBlocking(name: "bg-store-write") { [self] in
      try pool.write { db in
        let result = try body(db)
        try checkIdentity()
        return result
      }
    }
  }

  private func checkIdentity() throws(StoreError) {
    guard let identity else { return }
    let current = FileIdentity(path)
    guard current != identity else { return }
    let error = StoreError.replaced(
      path: displayPath, detail: current == nil ? "deleted" : "replaced by another file")
    onReplaced?(error)
    throw error
  }

  /// Applies `ops` in order. An upsert (or start mark) followed by a later one of the same
  /// task in `ops` is skipped: the later one holds the whole row, so the result is the same
  /// with one write (a task scheduled and claimed in one batch is written once). A start mark
  /// that supersedes an upsert of the batch writes the whole row.
  static func apply(_ ops: [StoreOp], in db: Database, historyLimit: Int) throws {
    try apply(chunks: [ops], in: db, historyLimit: historyLimit, statements: WriterStatements())
  }

  /// How ``apply(chunks:in:historyLimit:)`` writes each change of a batch.
  private enum RowWrite: UInt8 {
    /// Not a task row's change: applied as it is.
    case other
    /// Superseded by a later row change of the same task in the batch.
    case skipped
    case upsert
    case markStarted
  }

  /// ``apply(_:in:historyLimit:)`` of the changes of `chunks`, in order as one list. Which row
  /// changes are written is found first, in one pass from the end with one dictionary lookup
  /// per row change (three before: a seventh of the commit thread's samples in the dispatch
  /// benchmark, hashing task ids).
  static func apply(
    chunks: [[StoreOp]], in db: Database, historyLimit: Int, statements: WriterStatements
  ) throws {
    let count = chunks.reduce(0) { $0 + $1.count }
    var writes = [RowWrite](repeating: .other, count: count)
    var lastWrite: [TaskId: Int] = [:]
    lastWrite.reserveCapacity(count)
    var position = count
    for chunk in chunks.reversed() {
      for op in chunk.reversed() {
        position -= 1
        let (id, write): (TaskId, RowWrite)
        switch op {
        case .upsert(let row): (id, write) = (row.id, .upsert)
        case .markStarted(let row): (id, write) = (row.id, .markStarted)
        default: continue
        }
        let last = Self.firstStored(&lastWrite[id, default: position])
        if last == position {
          writes[position] = write
        } else {
          writes[position] = .skipped
          // The start mark that supersedes an upsert writes the row the upsert would have.
          if write == .upsert && writes[last] == .markStarted { writes[last] = .upsert }
        }
      }
    }
    position = 0
    for chunk in chunks {
      for op in chunk {
        defer { position += 1 }
        switch op {
        case .upsert(let row), .markStarted(let row):
          switch writes[position] {
          case .upsert: try row.upsert(db, statements)
          case .markStarted: try row.markStarted(db, statements)
          case .skipped, .other: continue
          }
        case .delete(let id):
          try db.cachedStatement(sql: "DELETE FROM task WHERE id = ?").execute(
            arguments: [id.rawValue])
          try db.cachedStatement(sql: "DELETE FROM run WHERE taskId = ?").execute(
            arguments: [id.rawValue])
        case .deleteAll:
          try db.execute(sql: "DELETE FROM task; DELETE FROM run")
        case .appendRun(let run):
          let insert = try statements.statement(.appendRun, in: db) {
            """
            INSERT INTO run (taskId, attempt, startedAt, endedAt, outcome, reason, conditions,
              outputTail, stop) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
          }
          try insert.run(in: db) { bind in
            bind(1, run.taskId.rawValue.databaseValue)
            bind(2, run.attempt.databaseValue)
            bind(3, run.startedAt?.nanosecondsSince1970.databaseValue ?? .null)
            bind(4, run.endedAt.nanosecondsSince1970.databaseValue)
            bind(5, run.outcome.databaseValue)
            bind(6, run.reason?.databaseValue ?? .null)
            bind(7, run.conditions?.databaseValue ?? .null)
            bind(8, run.outputTail?.databaseValue ?? .null)
            bind(9, run.stop?.databaseValue ?? .null)
          }
          // The task's history beyond `historyLimit` runs.
          let trim = try statements.statement(.trimRuns, in: db) {
            """
            DELETE FROM run WHERE taskId = ?1 AND id <= (
              SELECT id FROM run WHERE taskId = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
            """
          }
          try trim.run(in: db) { bind in
            bind(1, run.taskId.rawValue.databaseValue)
            bind(2, historyLimit.databaseValue)
          }
        case .recordNetworkBytes(let record):
          try MeteredUsageStore.insert(db, record, statements: statements)
        }
      }
    }
  }

  /// The value in `slot` (one lookup for both the read and the insertion of a default).
  private static func firstStored(_ slot: inout Int) -> Int { slot }

  /// Frees the writing connection's page cache (`sqlite3_db_release_memory`, up to
  /// ``pageCacheKibibytes``) and its statement cache: pages are read again from the operating
  /// system's cache when next needed. Waits for a commit in progress.
  func releaseMemory() {
    pool.writeWithoutTransaction { db in
      writerStatements.clear()
      db.releaseMemory()
    }
  }

  /// Folds the WAL into the database file and closes the pool.
  func close() throws {
    _ = try pool.writeWithoutTransaction { db in
      writerStatements.clear()
      return try db.checkpoint(.truncate)
    }
    try pool.close()
  }
}

/// A file's device and inode: what a path names at one moment.
struct FileIdentity: Equatable, Sendable {
  var device: UInt64
  var inode: UInt64

  /// What `path` names now (following no symlink); nil when nothing does.
  init?(_ path: String) {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
  }
}
