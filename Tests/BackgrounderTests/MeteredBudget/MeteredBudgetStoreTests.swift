import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// A request's `WorkConstraints.meteredBudget` is kept in its task row (migration
/// `task-metered-budget`), so an embedder's budgeted task still uses metered links within its
/// budget after a restart, before it is scheduled again.
@Suite(.timeLimit(.minutes(3)))
struct MeteredBudgetStoreTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  @Test("the budget reads back as stored (trailing, monthly, none); a bad one is corrupt")
  func budgetKeptInTheTaskRow() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let budgets: [MeteredBudget?] = [
      MeteredBudget(bytes: 200_000_000, window: .trailing(seconds: 86_400)),
      MeteredBudget(bytes: 2_000_000_000, window: .monthly(day: 31)), nil,
    ]
    let rows = budgets.enumerated().map { index, budget in
      TaskRow(
        request: .oneTime(
          WorkRequest.OneTime(
            taskId: id("dev.example.budget\(index)"),
            constraints: WorkConstraints(networkRequired: .unmetered, meteredBudget: budget))),
        input: Data(), now: t0)
    }
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5)
    defer { try? store.close() }
    try store.pool.write { db in
      try TaskStore.apply(rows.map { .upsert($0) }, in: db, historyLimit: 5)
    }
    let read = try store.pool.read { db in
      try rows.map { try TaskRow.fetchOne(db, key: $0.id.rawValue)?.constraints.meteredBudget }
    }
    #expect(read == budgets)

    try store.pool.write { db in
      try db.execute(
        sql: "UPDATE task SET meteredBudget = '0|86400s' WHERE id = ?",
        arguments: [rows[0].id.rawValue])
    }
    #expect(throws: StoreError.self) {
      try store.pool.read { db in try TaskRow.fetchOne(db, key: rows[0].id.rawValue) }
    }
  }
}
