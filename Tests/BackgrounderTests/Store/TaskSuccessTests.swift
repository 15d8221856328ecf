import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// `task_success` (migration `i29-staleness`): a task's last success survives the pruning of its
/// runs, is filled from the runs of a store written before the migration, and goes with its task.
@Suite(.timeLimit(.minutes(1)))
struct TaskSuccessTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let taskId = id("dev.example.backup")

  private func run(_ outcome: String, at seconds: Int64) -> StoreOp {
    .appendRun(
      RunRow(
        taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(seconds)),
        outcome: outcome, reason: nil))
  }

  @Test("a store from before the migration gets the last success its runs still show")
  func backfilledFromRuns() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let row = TaskRow(
      request: .periodic(WorkRequest.Periodic(taskId: taskId, interval: .seconds(3600))),
      input: Data(), now: t0)
    let queue = try DatabaseQueue(path: path)
    try Schema.migrator.migrate(queue, upTo: "v2-allowed-networks-and-mounts")
    try queue.write { db in
      try TaskStore.apply([.upsert(row)], in: db, historyLimit: 5)
      // The run table as it was then (before i29-run-detail's columns).
      for (outcome, seconds) in [("success", 10), ("success", 20), ("failure", 30)] {
        try db.execute(
          sql:
            "INSERT INTO run (taskId, attempt, startedAt, endedAt, outcome) VALUES (?, 0, ?, ?, ?)",
          arguments: [
            taskId.rawValue, t0.nanosecondsSince1970,
            t0.advanced(by: .seconds(Int64(seconds))).nanosecondsSince1970, outcome,
          ])
      }
    }
    try queue.close()

    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 2)
    defer { try? store.close() }
    let before = try TaskStoreReader(path: path).successes()
    #expect(before.map(\.lastSuccessAt) == [t0.advanced(by: .seconds(20)).date])
    #expect(before.first?.createdAt == t0.date)

    // Failures prune the successful runs away; the last success stays.
    try store.pool.write { db in
      try TaskStore.apply(
        [run("failure", at: 40), run("failure", at: 50), run("failure", at: 60)], in: db,
        historyLimit: 2)
    }
    let runs = try TaskStoreReader(path: path).task(taskId)?.recentRuns.map(\.outcome)
    #expect(runs == ["failure", "failure"])
    #expect(
      try TaskStoreReader(path: path).successes().first?.lastSuccessAt
        == t0.advanced(by: .seconds(20)).date)

    // A later success replaces it; rewriting the task keeps it; deleting the task removes it.
    try store.pool.write { db in
      try TaskStore.apply([run("success", at: 70), .upsert(row)], in: db, historyLimit: 2)
    }
    #expect(
      try TaskStoreReader(path: path).successes().first?.lastSuccessAt
        == t0.advanced(by: .seconds(70)).date)
    try store.pool.write { db in
      try TaskStore.apply([.delete(taskId)], in: db, historyLimit: 2)
      #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM task_success") == 0)
    }
  }
}
