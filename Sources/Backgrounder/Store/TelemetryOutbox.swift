import GRDB

/// The oldest rows of the telemetry outbox (see ``Backgrounder/appendTelemetry(_:capacity:)``),
/// to export as one batch.
public struct TelemetryBatch: Hashable, Sendable {
  /// The rows' payloads, oldest first.
  public var payloads: [String]
  /// The id of the newest row in the batch: delivering it removes every row up to this one.
  public var lastId: Int64
  /// Rows dropped from the full outbox (oldest first) since the last delivered batch.
  public var dropped: Int

  /// Creates a batch.
  public init(payloads: [String], lastId: Int64, dropped: Int) {
    self.payloads = payloads
    self.lastId = lastId
    self.dropped = dropped
  }
}

/// A bounded queue of telemetry rows in the store (`telemetry_outbox`), kept across restarts
/// and offline periods until an exporter delivered them. When it is full the oldest row is
/// dropped and counted (`telemetry_dropped`), and the count travels with the next batch.
enum TelemetryOutbox {
  /// Creates the outbox and its drop counter (migration `i29-telemetry-outbox`).
  static func createTables(_ db: Database) throws {
    try db.execute(
      sql: """
        CREATE TABLE telemetry_outbox (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          payload TEXT NOT NULL
        );
        CREATE TABLE telemetry_dropped (
          id INTEGER PRIMARY KEY CHECK (id = 0),
          count INTEGER NOT NULL
        );
        INSERT INTO telemetry_dropped (id, count) VALUES (0, 0);
        """)
  }

  /// Appends `payload`; past `capacity` rows, drops the oldest and counts them.
  static func append(_ db: Database, payload: String, capacity: Int) throws {
    try db.execute(sql: "INSERT INTO telemetry_outbox (payload) VALUES (?)", arguments: [payload])
    let count = try count(db)
    let excess = count - max(capacity, 1)
    guard excess > 0 else { return }
    try db.execute(
      sql: """
        DELETE FROM telemetry_outbox
        WHERE id IN (SELECT id FROM telemetry_outbox ORDER BY id LIMIT ?)
        """,
      arguments: [excess])
    try db.execute(
      sql: "UPDATE telemetry_dropped SET count = count + ? WHERE id = 0", arguments: [excess])
  }

  /// How many rows wait.
  static func count(_ db: Database) throws -> Int {
    try Int.fetchOne(db, sql: "SELECT count(*) FROM telemetry_outbox") ?? 0
  }

  /// The oldest `limit` rows with the drop count, or nil when the outbox is empty.
  static func batch(_ db: Database, limit: Int) throws -> TelemetryBatch? {
    let rows = try Row.fetchAll(
      db, sql: "SELECT id, payload FROM telemetry_outbox ORDER BY id LIMIT ?",
      arguments: [max(limit, 1)])
    guard let last = rows.last else { return nil }
    let dropped = try Int.fetchOne(db, sql: "SELECT count FROM telemetry_dropped WHERE id = 0")
    return TelemetryBatch(payloads: rows.map { $0[1] }, lastId: last[0], dropped: dropped ?? 0)
  }

  /// Removes a delivered batch's rows and the drops it reported.
  static func acknowledge(_ db: Database, _ batch: TelemetryBatch) throws {
    try db.execute(sql: "DELETE FROM telemetry_outbox WHERE id <= ?", arguments: [batch.lastId])
    try db.execute(
      sql: "UPDATE telemetry_dropped SET count = max(count - ?, 0) WHERE id = 0",
      arguments: [batch.dropped])
  }
}

extension Backgrounder {
  /// Appends one row (a finished run's span, as the daemon encodes it) to the store's telemetry
  /// outbox; past `capacity` rows the oldest is dropped and counted.
  public func appendTelemetry(_ payload: String, capacity: Int) async throws {
    guard let runtime else { throw LifecycleError.notStarted }
    try await runtime.store.write { db in
      try TelemetryOutbox.append(db, payload: payload, capacity: capacity)
    }
  }

  /// The oldest `limit` rows of the telemetry outbox, or nil when it is empty.
  public func telemetryBatch(limit: Int) async throws -> TelemetryBatch? {
    guard let runtime else { throw LifecycleError.notStarted }
    return try await runtime.store.read { db in try TelemetryOutbox.batch(db, limit: limit) }
  }

  /// Removes a batch the exporter delivered (its rows, and the drops it reported).
  public func acknowledgeTelemetry(_ batch: TelemetryBatch) async throws {
    guard let runtime else { throw LifecycleError.notStarted }
    try await runtime.store.write { db in try TelemetryOutbox.acknowledge(db, batch) }
  }
}
