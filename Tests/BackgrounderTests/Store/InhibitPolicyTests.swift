import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// A request's ``InhibitPolicy`` (migration `i27-inhibit`): kept with the task in the store,
/// read back after a restart, handed to the worker in its context, and the default for tasks
/// stored before the migration.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct InhibitPolicyTests {
  private let blocking = id("test.inhibit.block")
  private let periodic = id("test.inhibit.none")
  private let defaulted = id("test.inhibit.default")

  @Test("each request's policy round-trips through the store and reaches the worker")
  func roundTripsAndReachesTheWorker() async throws {
    let worker = RecordingWorker()
    let harness = try await Harness.start(
      workers: [blocking: worker, periodic: worker, defaulted: worker])
    #expect(
      await harness.backgrounder.schedule(
        WorkRequest.OneTime(taskId: blocking, inhibitPolicy: .block)) == .scheduled)
    #expect(
      await harness.backgrounder.schedule(
        WorkRequest.Periodic(taskId: periodic, interval: .seconds(3600), inhibitPolicy: .none))
        == .scheduled)
    #expect(
      await harness.backgrounder.schedule(WorkRequest.OneTime(taskId: defaulted)) == .scheduled)
    await harness.recorder.wait(count: 3) { $0.kind.isWorkCompleted }
    let seen = Dictionary(
      worker.contexts.map { ($0.taskId, $0.inhibitPolicy) }, uniquingKeysWith: { $1 })
    #expect(seen == [blocking: .block, periodic: .none, defaulted: .delay])
    await harness.stop(removeFiles: false)
    defer { try? FileManager.default.removeItem(at: harness.directory) }

    let queue = try DatabaseQueue(path: harness.storePath)
    let stored = try await queue.read { db in
      try [String: String](
        uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, inhibit FROM task").map {
          ($0[0], $0[1])
        })
    }
    try queue.close()
    #expect(
      stored == [
        blocking.rawValue: "block", periodic.rawValue: "none", defaulted.rawValue: "delay",
      ])
    let read = try TaskStoreReader(path: harness.storePath).tasks()
    #expect(
      Dictionary(uniqueKeysWithValues: read.map { ($0.id, $0.inhibitPolicy) })
        == [blocking: .block, periodic: .none, defaulted: .delay])
    // Through the task rows a restarted runtime loads.
    let rows = try TaskStore.open(path: harness.storePath, durability: .full, historyLimit: 5)
    defer { try? rows.close() }
    let loaded = try await rows.pool.read { db in try TaskRow.fetchAllByName(db, TaskRow.all()) }
    #expect(
      Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0.inhibitPolicy) })
        == [blocking: .block, periodic: .none, defaulted: .delay])
  }

  @Test("a task stored before the migration reads as delay")
  func storedBeforeTheMigration() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let queue = try olderStore(
      at: path, upTo: "i29-telemetry-outbox", holding: blocking,
      now: WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000))
    try queue.close()
    // Opening migrates the store and loads its active tasks.
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5)
    try store.close()
    let migrated = try DatabaseQueue(path: path)
    defer { try? migrated.close() }
    let loaded = try migrated.read { db in try TaskRow.fetchAllByName(db, TaskRow.all()) }
    #expect(loaded.map(\.inhibitPolicy) == [.delay])
    #expect(try TaskStoreReader(path: path).tasks().map(\.inhibitPolicy) == [.delay])
  }
}
