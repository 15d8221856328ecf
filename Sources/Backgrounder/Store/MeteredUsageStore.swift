import GRDB

/// A run's counted bytes as the store keeps them (`run_network_bytes`): what `history` shows
/// and what the metered budgets count (the metered part, at the run's end).
public struct RunNetworkRecord: Hashable, Sendable {
  /// The task.
  public var taskId: TaskId
  /// The run's attempt.
  public var attempt: Int
  /// When the run started.
  public var startedAt: WallInstant
  /// When the bytes were counted (the run's end, or the last reading).
  public var at: WallInstant
  /// The bytes.
  public var bytes: RunNetworkBytes

  /// Creates a record.
  public init(
    taskId: TaskId, attempt: Int, startedAt: WallInstant, at: WallInstant, bytes: RunNetworkBytes
  ) {
    self.taskId = taskId
    self.attempt = attempt
    self.startedAt = startedAt
    self.at = at
    self.bytes = bytes
  }
}

/// The `run_network_bytes` table (migration `metered-usage-run-network-bytes`): one row per
/// run whose bytes were counted. Kept across restarts, so budgets survive them.
enum MeteredUsageStore {
  /// Rows older than this are deleted when a row is added: longer than any window (a
  /// trailing window is at most 366 days, a monthly one at most 31).
  static let retention: Duration = .seconds(400 * 86_400)

  /// Creates the table (`run_network_bytes`, or `name` while it is rebuilt) and, when
  /// `indexed`, its indexes. Ids are a plain `INTEGER PRIMARY KEY` (migration
  /// `fewer-pages-per-run` rebuilt stores made with `AUTOINCREMENT`).
  static func createTable(
    _ db: Database, named name: String = "run_network_bytes", indexed: Bool = true
  ) throws {
    try db.execute(
      sql: """
        CREATE TABLE \(name) (
          id INTEGER PRIMARY KEY,
          taskId TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          startedAt INTEGER NOT NULL,
          at INTEGER NOT NULL,
          sent INTEGER NOT NULL,
          received INTEGER NOT NULL,
          meteredSent INTEGER NOT NULL,
          meteredReceived INTEGER NOT NULL,
          accounting TEXT NOT NULL
        )
        """)
    if indexed { try createIndexes(db) }
  }

  /// The indexes of `run_network_bytes`: by time (windows, retention) and by task (history).
  static func createIndexes(_ db: Database) throws {
    try db.execute(
      sql: """
        CREATE INDEX run_network_bytes_at ON run_network_bytes (at);
        CREATE INDEX run_network_bytes_task ON run_network_bytes (taskId, startedAt);
        """)
  }

  /// Records `record` and drops the records older than the retention, with the writer's
  /// statements (`statements`), each prepared once per connection.
  static func insert(
    _ db: Database, _ record: RunNetworkRecord,
    statements: WriterStatements = WriterStatements()
  ) throws {
    let insert = try statements.statement(.recordNetworkBytes, in: db) {
      """
      INSERT INTO run_network_bytes (taskId, attempt, startedAt, at, sent, received,
        meteredSent, meteredReceived, accounting) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """
    }
    try insert.run(in: db) { bind in
      bind(1, record.taskId.rawValue.databaseValue)
      bind(2, record.attempt.databaseValue)
      bind(3, record.startedAt.nanosecondsSince1970.databaseValue)
      bind(4, record.at.nanosecondsSince1970.databaseValue)
      bind(5, record.bytes.sent.databaseValue)
      bind(6, record.bytes.received.databaseValue)
      bind(7, record.bytes.meteredSent.databaseValue)
      bind(8, record.bytes.meteredReceived.databaseValue)
      bind(9, record.bytes.accounting.rawValue.databaseValue)
    }
    let horizon = record.at.advanced(by: .zero - retention)
    let trim = try statements.statement(.trimNetworkBytes, in: db) {
      "DELETE FROM run_network_bytes WHERE at < ?"
    }
    try trim.run(in: db) { bind in bind(1, horizon.nanosecondsSince1970.databaseValue) }
  }

  /// The bytes of the run of `id` (attempt `attempt`) that started at `startedAt` and ended at
  /// `endedAt`, as the `run` table records it; nil when none were counted. The counting
  /// starts after the runtime records the start (in the worker) and ends before the outcome
  /// is recorded, so its start lies in the run's span.
  static func bytes(
    _ db: Database, of id: TaskId, attempt: Int, startedAt: WallInstant, endedAt: WallInstant
  ) throws -> RunNetworkBytes? {
    let statement = try db.cachedStatement(
      sql: """
        SELECT sent, received, meteredSent, meteredReceived, accounting FROM run_network_bytes
        WHERE taskId = ? AND attempt = ? AND startedAt >= ? AND startedAt <= ?
        ORDER BY startedAt LIMIT 1
        """)
    guard
      let row = try Row.fetchOne(
        statement,
        arguments: [
          id.rawValue, attempt, startedAt.nanosecondsSince1970, endedAt.nanosecondsSince1970,
        ]),
      let accounting = ByteAccounting(rawValue: row[4])
    else { return nil }
    return RunNetworkBytes(
      sent: row[0], received: row[1], meteredSent: row[2], meteredReceived: row[3],
      accounting: accounting)
  }

  static func records(_ db: Database, after start: WallInstant) throws -> [RunNetworkRecord] {
    try Row.fetchAll(
      db,
      sql: """
        SELECT taskId, attempt, startedAt, at, sent, received, meteredSent, meteredReceived,
          accounting FROM run_network_bytes WHERE at > ? ORDER BY at
        """,
      arguments: [start.nanosecondsSince1970]
    ).compactMap { row -> RunNetworkRecord? in
      guard let id = try? TaskId(row[0] as String),
        let accounting = ByteAccounting(rawValue: row[8])
      else { return nil }
      return RunNetworkRecord(
        taskId: id, attempt: row[1], startedAt: WallInstant(nanosecondsSince1970: row[2]),
        at: WallInstant(nanosecondsSince1970: row[3]),
        bytes: RunNetworkBytes(
          sent: row[4], received: row[5], meteredSent: row[6], meteredReceived: row[7],
          accounting: accounting))
    }
  }
}

extension Backgrounder {
  /// Stores a run's counted bytes (kept 400 days: longer than any budget window), through the
  /// store's writer (committed with the runs' changes of the same moment); returns once
  /// committed. A worker keeps its own run's bytes with its outcome instead, in one
  /// transaction: ``WorkContext/recordNetworkBytes(_:)``.
  public func recordNetworkBytes(_ record: RunNetworkRecord) async throws {
    guard let runtime else { throw LifecycleError.notStarted }
    try await runtime.writer.waitCommitted(
      runtime.writer.enqueue([.recordNetworkBytes(record)], events: []))
  }

  /// The stored runs' bytes counted after `start`, oldest first.
  public func networkBytes(after start: WallInstant) async throws -> [RunNetworkRecord] {
    guard let runtime else { throw LifecycleError.notStarted }
    return try await runtime.store.read { db in
      try MeteredUsageStore.records(db, after: start)
    }
  }
}
