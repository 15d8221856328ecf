import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// Task rows are written and read by column name; a bad value is a corrupt-store error naming
/// the task and the column, never a silent default.
@Suite(.timeLimit(.minutes(3)))
struct TaskRecordTests {
  private let job = id("test.record.job")
  private let ephemeral = id("test.record.ephemeral")

  /// A store holding a scheduled task and an ephemeral one (which the next start sweeps), closed
  /// again.
  private func storeWithTasks() async throws -> (URL, String) {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let backgrounder = Backgrounder(storePath: path)
    try backgrounder.register([job, ephemeral]) { _ in nil }
    try await backgrounder.start()
    let request = WorkRequest.OneTime(
      taskId: job, input: ["album": .string("Holidays")], initialDelay: .seconds(3600))
    #expect(await backgrounder.schedule(request) == .scheduled)
    let sweptAtStart = WorkRequest.OneTime(
      taskId: ephemeral, ephemeral: true, initialDelay: .seconds(3600))
    #expect(await backgrounder.schedule(sweptAtStart) == .scheduled)
    await backgrounder.shutdown()
    return (directory, path)
  }

  private func taskRows(_ path: String) throws -> [Row] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM task ORDER BY id") }
  }

  @Test(
    "a corrupt value is reported naming the task and the column, and nothing is changed",
    arguments: [
      ("attempt", "'x'", "column attempt holds \"x\""),
      ("state", "'exploded'", "column state holds unknown value \"exploded\""),
      ("nextRun", "'soon'", "column nextRun holds \"soon\""),
      ("lastResult", "'maybe'", "column lastResult holds unknown value \"maybe\""),
      ("blockedOn", "'network:bogus'", "column blockedOn holds an unknown predicate"),
      ("backoffJitter", "x'00'", "column backoffJitter holds"),
    ])
  func corruptValue(column: String, value: String, expected: String) async throws {
    let (directory, path) = try await storeWithTasks()
    defer { try? FileManager.default.removeItem(at: directory) }
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
      try db.execute(
        sql: "UPDATE task SET \(column) = \(value) WHERE id = ?", arguments: [job.rawValue])
    }
    try queue.close()
    let before = try taskRows(path)
    #expect(before.count == 2)

    let matches: (any Error) -> Bool = { error in
      guard let error = error as? StoreError else { return false }
      return error.code == .corrupt && error.path == path
        && error.detail.hasPrefix("task \(job): \(expected)") && "\(error)".contains(path)
    }
    await #expect(performing: { try await Backgrounder(storePath: path).start() }, throws: matches)
    // `status`'s reader reads (and checks) only the columns it shows; the start checks all.
    if column != "backoffJitter" {
      #expect(performing: { try TaskStoreReader(path: path).tasks() }, throws: matches)
    }
    // The start's sweep of ephemeral work was rolled back with the failed load.
    #expect(try taskRows(path) == before)
  }

  @Test func everyColumnsOrdinalIsItsPlaceInAllCases() {
    for (place, column) in TaskRow.Columns.allCases.enumerated() {
      #expect(column.ordinal == place, "\(column)")
    }
  }

  @Test("every column of the task table is written and read back by name")
  func roundTrip() async throws {
    let (directory, path) = try await storeWithTasks()
    defer { try? FileManager.default.removeItem(at: directory) }
    var row = TaskRow(
      request: .periodic(
        WorkRequest.Periodic(
          taskId: id("test.record.full"),
          constraints: WorkConstraints(
            networkRequired: .unmetered, requiresCharging: true, requiresBatteryNotLow: true,
            requiresIdle: .seconds(600), onUserReturn: .stop),
          input: ["n": .int(7)], ephemeral: true, interval: .seconds(7200),
          flexWindow: .seconds(600),
          backoff: .linear(initialDelay: .seconds(45), maxAttempts: 4, jitter: 0.5),
          budget: .seconds(90))),
      input: Data("{\"n\":7}".utf8), now: WallInstant(nanosecondsSince1970: 1_700_000_000_123))
    row.state = .backoff
    row.attempt = 3
    row.deferrals = 2
    row.lastResult = .retry
    row.lastReason = "exit status 75"
    row.lastRunStartedAt = WallInstant(nanosecondsSince1970: 1_700_000_100_000)
    row.lastRunEndedAt = WallInstant(nanosecondsSince1970: 1_700_000_200_000)
    row.blockedOn = [
      .networkRequired(.unmetered), .requiresCharging, .workerNotRegistered,
      .userIdle(required: .seconds(600), idleSince: nil, unknown: nil),
      .userIdle(
        required: .seconds(60), idleSince: Date(timeIntervalSince1970: 1_700_000_000.123),
        unknown: nil),
      .userIdle(required: .seconds(1), idleSince: nil, unknown: "logind not running, 100%"),
    ]
    row.hint = .expedited(onQuotaExhausted: .drop)
    row.initialDelay = .seconds(5)
    row.updatedAt = WallInstant(nanosecondsSince1970: 1_700_000_300_000)

    let pool = try DatabasePool(path: path)
    let written = row
    try await pool.write { db in try TaskStore.apply([.upsert(written)], in: db, historyLimit: 5) }
    let read = try await pool.read { db in try TaskRow.fetchOne(db, key: "test.record.full") }
    #expect(read == row)
    let tableColumns = try await pool.read { db in try db.columns(in: "task").map(\.name) }
    #expect(Set(tableColumns) == Set(TaskRow.Columns.allCases.map(\.rawValue)))
    try pool.close()
  }
}
