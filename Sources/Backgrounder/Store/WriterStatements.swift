import GRDB

/// The statements every batch of the writer runs, each prepared once per connection and found
/// by its slot. `db.cachedStatement(sql:)` finds a statement by hashing its whole SQL text, at
/// each call (the task upsert's is 2,200 characters): a tenth of the commit thread's samples
/// in the dispatch benchmark (issue #35).
///
/// Used only inside the writing connection's transactions, which GRDB runs one at a time, so
/// it needs no lock of its own. The statements keep the connection from closing:
/// ``clear()`` before the connection closes or gives back its memory (``TaskStore``).
final class WriterStatements: @unchecked Sendable {
  enum Slot: Int, CaseIterable {
    case upsertTask, markStarted, appendRun, trimRuns, recordNetworkBytes, trimNetworkBytes
  }

  private var statements: [Statement?] = Array(repeating: nil, count: Slot.allCases.count)
  /// The connection the statements belong to.
  private weak var database: Database?

  /// The statement of `slot` on `db`, prepared from `sql` the first time.
  func statement(_ slot: Slot, in db: Database, sql: () -> String) throws -> Statement {
    if database !== db {
      clear()
      database = db
    }
    if let statement = statements[slot.rawValue] { return statement }
    let statement = try db.makeStatement(sql: sql())
    statements[slot.rawValue] = statement
    return statement
  }

  /// Finalizes the statements.
  func clear() {
    for index in statements.indices { statements[index] = nil }
  }
}
