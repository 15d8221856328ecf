import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// `task_success` (migration `i29-staleness`): a task's last success survives the pruning of its
/// runs, is filled from the runs of a store written before the migration, and goes with its task.
@Suite(.timeLimit(.minutes(3)))
struct TaskSuccessTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let taskId = id("dev.example.backup")

  private func run(_ outcome: String, at seconds: Int64) -> StoreOp {
    .appendRun(
      RunRow(
        taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(seconds)),
        outcome: outcome, reason: nil))
  }

  @Test("the successes and statuses of some tasks only: those of the ids given that are stored")
  func readOfSomeTasks() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let queue = try DatabaseQueue(path: directory.appendingPathComponent("store.sqlite").path)
    try Schema.migrator.migrate(queue)
    let ids = ["dev.example.a", "dev.example.b", "dev.example.c"].map(id)
    try queue.write { db in
      let rows = ids.map {
        TaskRow(
          request: .periodic(WorkRequest.Periodic(taskId: $0, interval: .seconds(3600))),
          input: Data(), now: t0)
      }
      try TaskStore.apply(rows.map(StoreOp.upsert), in: db, historyLimit: 5)
    }
    let only: Set<TaskId> = [ids[0], ids[2], id("dev.example.gone")]
    let now = t0.date
    let read = try queue.read { db in
      (
        successes: try TaskSuccess.all(db).map(\.id),
        someSuccesses: try TaskSuccess.all(db, of: only).map(\.id),
        noSuccesses: try TaskSuccess.all(db, of: []).map(\.id),
        statuses: try TaskStatusQuery.all(db, now: now, historyLimit: 0).map(\.id),
        someStatuses: try TaskStatusQuery.all(db, now: now, historyLimit: 0, of: only).map(\.id)
      )
    }
    #expect(read.successes == ids)
    #expect(read.someSuccesses == [ids[0], ids[2]])
    #expect(read.noSuccesses.isEmpty)
    #expect(read.statuses == ids)
    #expect(read.someStatuses == [ids[0], ids[2]])
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
    // A store as `i29-staleness` found it, but with the columns of the migrations appended after
    // it (today's rows carry them): every migration, then `i29-staleness` undone.
    try Schema.migrator.migrate(queue)
    try queue.write { db in
      try TaskStore.apply(
        [.upsert(row), run("success", at: 10), run("success", at: 20), run("failure", at: 30)],
        in: db, historyLimit: 5)
      try db.execute(
        sql: """
          DROP TRIGGER run_success;
          DROP TRIGGER task_success_gone;
          DROP TABLE task_success;
          DELETE FROM grdb_migrations WHERE identifier = 'i29-staleness';
          """)
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
