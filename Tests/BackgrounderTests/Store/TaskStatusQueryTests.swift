import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// `status` reads the task list with raw SQLite statements (``TaskStatusQuery``); it must read
/// exactly what the row-by-row ``TaskRow`` decoding reads, and report bad values as clearly.
@Suite(.timeLimit(.minutes(3)))
struct TaskStatusQueryTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  /// A store with one task in each state (times, results, reasons, predicates, inputs set or
  /// absent) and `runs` recorded runs for each.
  private func store(runs: Int) throws -> (URL, String, [TaskId]) {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let store = try TaskStore.open(path: path, durability: .normal, historyLimit: 20)
    var ops: [StoreOp] = []
    var ids: [TaskId] = []
    let states: [TaskState] = [.pending, .running, .backoff, .blocked, .succeeded, .failed]
    for (index, state) in states.enumerated() {
      let taskId = id("test.query.\(state.rawValue)")
      ids.append(taskId)
      let request: WorkRequest =
        index.isMultiple(of: 2)
        ? .oneTime(WorkRequest.OneTime(taskId: taskId, initialDelay: .seconds(60 * index)))
        : .periodic(WorkRequest.Periodic(taskId: taskId, interval: .seconds(3600)))
      var row = TaskRow(request: request, input: Data("{\"n\":\(index)}".utf8), now: now)
      row.state = state
      row.attempt = index
      row.deferrals = index / 2
      row.ephemeral = index == 3
      if index > 0 {
        row.lastResult = [.success, .failure, .retry][index % 3]
        row.lastReason = index == 2 ? "exit status 75 \"quoted\"\n" : nil
        row.lastRunStartedAt = now.advanced(by: .milliseconds(index))
        row.lastRunEndedAt = now.advanced(by: .seconds(index))
      }
      row.blockedOn = index == 3 ? [.networkRequired(.unmetered), .requiresCharging] : []
      ops.append(.upsert(row))
      for run in 0..<runs {
        ops.append(
          .appendRun(
            RunRow(
              taskId: taskId, attempt: run, startedAt: run.isMultiple(of: 2) ? nil : now,
              endedAt: now.advanced(by: .seconds(run)), outcome: "retry",
              reason: run == 1 ? "budget expired" : nil)))
      }
    }
    try store.pool.write { db in try TaskStore.apply(ops, in: db, historyLimit: 20) }
    try store.close()
    return (directory, path, ids.sorted { $0.rawValue < $1.rawValue })
  }

  @Test(
    "the task list holds, for every state, what the row-by-row reader reads for each task",
    arguments: [0, 2, 8])
  func sameAsRowByRow(runs: Int) throws {
    let (directory, path, ids) = try store(runs: runs)
    defer { try? FileManager.default.removeItem(at: directory) }
    let reader = try TaskStoreReader(path: path)
    let at = now.advanced(by: .seconds(30)).date
    let list = try reader.tasks(now: at, historyLimit: 5)
    let oneByOne = try ids.map { try #require(try reader.task($0, now: at, historyLimit: 5)) }
    #expect(list == oneByOne)
    #expect(list.map(\.id) == ids)
    #expect(list.allSatisfy { $0.recentRuns.count == min(runs, 5) })
    #expect(try reader.tasks(now: at, historyLimit: 0).allSatisfy(\.recentRuns.isEmpty))
  }

  @Test(
    "a bad value in a shown column of a task or a run names the task and the column",
    arguments: [
      ("UPDATE task SET deferrals = 'x'", "task test.query.pending: column deferrals holds \"x\""),
      ("UPDATE task SET kind = 'often'", "task test.query.pending: column kind holds unknown"),
      ("UPDATE task SET lastRunEndedAt = 1.5", "task test.query.pending: column lastRunEndedAt"),
      ("UPDATE task SET ephemeral = 'yes'", "task test.query.pending: column ephemeral holds"),
      ("UPDATE task SET id = 'no-dot'", "task no-dot: column id holds an invalid task id"),
      ("UPDATE run SET outcome = x'ff'", "run of task test.query.backoff: column outcome holds"),
      ("UPDATE run SET attempt = 'one'", "run of task test.query.backoff: column attempt holds"),
    ])
  func corruptValue(update: String, expected: String) throws {
    let (directory, path, _) = try store(runs: 1)
    defer { try? FileManager.default.removeItem(at: directory) }
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      let scope = update.contains("UPDATE run") ? "taskId" : "id"
      let target = update.contains("UPDATE run") ? "test.query.backoff" : "test.query.pending"
      try db.execute(sql: "\(update) WHERE \(scope) = ?", arguments: [target])
    }
    try queue.close()
    let matches: (any Error) -> Bool = { error in
      guard let error = error as? StoreError else { return false }
      return error.code == .corrupt && error.path == path && error.detail.hasPrefix(expected)
    }
    #expect(performing: { try TaskStoreReader(path: path).tasks() }, throws: matches)
  }
}

extension TaskStatusQueryTests {
  @Test(
    "each task gets its own newest runs: ids that prefix one another, tasks stored out of order, and runs left by a removed task"
  )
  func runsGoToTheirOwnTask() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let store = try TaskStore.open(path: path, durability: .normal, historyLimit: 20)
    // Stored in this order, so the table's own order is not the id order.
    let names = ["test.b", "test.a.b", "test.a", "test.ab", "test.gone", "test.c"]
    let runCounts = [3, 0, 7, 1, 4, 2]
    var ops: [StoreOp] = []
    for (name, runs) in zip(names, runCounts) {
      let taskId = id(name)
      ops.append(
        .upsert(TaskRow(request: .oneTime(.init(taskId: taskId)), input: Data(), now: now)))
      for run in 0..<runs {
        ops.append(
          .appendRun(
            RunRow(
              taskId: taskId, attempt: run, startedAt: nil,
              endedAt: now.advanced(by: .seconds(run)), outcome: "\(name)#\(run)", reason: nil)))
      }
    }
    try store.pool.write { db in try TaskStore.apply(ops, in: db, historyLimit: 20) }
    // The task goes; its runs stay behind (as after a crash between the two deletions).
    try store.pool.write { db in try db.execute(sql: "DELETE FROM task WHERE id = 'test.gone'") }
    try store.close()

    let list = try TaskStoreReader(path: path).tasks(now: now.date, historyLimit: 5)
    #expect(list.map(\.id.rawValue) == ["test.a", "test.a.b", "test.ab", "test.b", "test.c"])
    let outcomes = Dictionary(
      uniqueKeysWithValues: list.map { ($0.id.rawValue, $0.recentRuns.map(\.outcome)) })
    #expect(outcomes["test.a"] == (2..<7).reversed().map { "test.a#\($0)" })
    #expect(outcomes["test.a.b"] == [])
    #expect(outcomes["test.ab"] == ["test.ab#0"])
    #expect(outcomes["test.b"] == ["test.b#2", "test.b#1", "test.b#0"])
    #expect(outcomes["test.c"] == ["test.c#1", "test.c#0"])
  }

  @Test("a store not migrated yet is read without the newer columns; a migrated one with them")
  func columnsOfTheStoreAsItIs() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    // As a daemon of the first schema wrote it: no windows, inhibit, pause or relax columns.
    let queue = try olderStore(
      at: path, upTo: "v1-tasks-and-runs", holding: id("test.query.old"), now: now)
    let old = try TaskStoreReader(path: path).tasks(now: now.date)
    #expect(old.map(\.id) == [id("test.query.old")])
    #expect(old.map(\.inhibitPolicy) == [.delay])
    // Migrated: the columns are there and read (a stored `block` is not the default `delay`).
    try Schema.migrator.migrate(queue)
    try queue.write { db in try db.execute(sql: "UPDATE task SET inhibit = 'block'") }
    try queue.close()
    let migrated = try TaskStoreReader(path: path).tasks(now: now.date)
    #expect(migrated.map(\.inhibitPolicy) == [.block])
  }

  @Test("without input, the tasks read are the same but for an empty input")
  func withoutInput() throws {
    let (directory, path, _) = try store(runs: 2)
    defer { try? FileManager.default.removeItem(at: directory) }
    let reader = try TaskStoreReader(path: path)
    let full = try reader.tasks(now: now.date)
    let lean = try reader.tasks(now: now.date, includingInput: false)
    #expect(full.contains { !$0.serializedInput.isEmpty })
    #expect(lean.allSatisfy { $0.serializedInput.isEmpty })
    #expect(
      lean
        == full.map { task in
          var task = task
          task.serializedInput = Data()
          return task
        })
  }
}
