import Foundation
import GRDB
import Testing

@testable import Backgrounder

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct StoreTests {
  private func start(_ path: String) async throws {
    let backgrounder = Backgrounder(storePath: path)
    RunningRuntimes.forRunningTest().stopAtEnd { await backgrounder.shutdown() }
    try await backgrounder.start()
  }

  @Test("a file that is not SQLite gives a clear error and is left untouched")
  func garbageFile() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    try garbage.write(to: URL(fileURLWithPath: path))

    await #expect {
      try await start(path)
    } throws: { error in
      guard let error = error as? StoreError, error.code == .corrupt else { return false }
      return error.path == path && "\(error)".contains(path)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    #expect(throws: StoreError.self) { try TaskStoreReader(path: path) }
  }

  @Test("a damaged store gives a clear error and is left untouched")
  func damagedStore() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    try await start(path)
    try await Task.sleep(for: .zero)
    let backgrounder = Backgrounder(storePath: path)
    try await backgrounder.start()
    await backgrounder.shutdown()
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    // Keep the 100-byte header, destroy the schema page.
    for index in 100..<min(4096, bytes.count) { bytes[index] = 0xA5 }
    try bytes.write(to: URL(fileURLWithPath: path))
    try? FileManager.default.removeItem(atPath: path + "-wal")
    try? FileManager.default.removeItem(atPath: path + "-shm")

    await #expect {
      try await start(path)
    } throws: { error in
      (error as? StoreError)?.code == .corrupt
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
  }

  @Test("a store written by a newer schema gives a clear error naming the unknown migrations")
  func newerSchema() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let first = Backgrounder(storePath: path)
    try await first.start()
    await first.shutdown()
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9-from-the-future')")
    }
    _ = try await queue.writeWithoutTransaction { db in
      try db.checkpoint(.truncate)
    }
    try queue.close()
    let before = try Data(contentsOf: URL(fileURLWithPath: path))

    await #expect(
      throws: StoreError.newerSchema(path: path, unknownMigrations: ["v9-from-the-future"])
    ) {
      try await start(path)
    }
    #expect(throws: StoreError.newerSchema(path: path, unknownMigrations: ["v9-from-the-future"])) {
      try TaskStoreReader(path: path)
    }
    let after = try Data(contentsOf: URL(fileURLWithPath: path))
    let changed = zip(before, after).enumerated().filter { $0.element.0 != $0.element.1 }.map(
      \.offset)
    #expect(
      after == before, "changed offsets: \(changed.prefix(20)) sizes \(before.count) \(after.count)"
    )
  }

  @Test("an SQLite file of another application is refused")
  func foreignDatabase() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("other.sqlite").path
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT)") }
    try queue.close()
    await #expect {
      try await start(path)
    } throws: { error in
      (error as? StoreError)?.code == .notABackgrounderStore
    }
  }

  @Test("the reader never creates a store")
  func readerMissingFile() {
    let path = temporaryDirectory().appendingPathComponent("missing.sqlite").path
    #expect(throws: StoreError.notFound(path: path)) { try TaskStoreReader(path: path) }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test("the read-only reader sees the daemon's writes and encodes the status keys")
  func readerWhileWriting() async throws {
    let job = id("test.reader.job")
    let h = try await Harness.start(workers: [job: RecordingWorker(.retry)])
    let reader = try TaskStoreReader(path: h.storePath)
    #expect(try reader.tasks().isEmpty)

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    await h.waitFor(job) { $0.isRetryScheduled }
    await h.driver.flush()
    let status = try #require(try reader.tasks(now: h.clock.date).first)
    #expect(status.id == job)
    #expect(status.state == .backoff)
    #expect(status.attempt == 1)
    #expect(status.lastResult == .retry)
    #expect(status.pendingPredicates == [.waitingForBackoff(until: h.at(30))])

    let json =
      try JSONSerialization.jsonObject(with: JSONEncoder().encode(status)) as! [String: Any]
    for key in [
      "id", "kind", "state", "nextRun", "attempt", "deferrals", "lastResult", "lastReason",
      "pendingPredicates",
    ] {
      #expect(json[key] != nil, "missing key \(key)")
    }
    #expect(json["lastResult"] as? String == "retry")
    #expect(json["kind"] as? String == "oneTime")
    #expect(json["nextRun"] as? String == "2023-11-14T22:13:50.000Z")
  }

  @Test("history keeps only the most recent runs")
  func historyLimit() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let store = try TaskStore.open(path: path, durability: .normal, historyLimit: 3)
    let job = id("test.history.job")
    try store.pool.write { db in
      for index in 0..<10 {
        try TaskStore.apply(
          [
            .appendRun(
              RunRow(
                taskId: job, attempt: index, startedAt: nil,
                endedAt: WallInstant(nanosecondsSince1970: Int64(index)), outcome: "retry",
                reason: nil))
          ], in: db, historyLimit: 3)
      }
    }
    let attempts = try store.pool.read { db in
      try Int.fetchAll(db, sql: "SELECT attempt FROM run ORDER BY id")
    }
    #expect(attempts == [7, 8, 9])
    try store.close()
  }

  @Test("every connection of the store caps its page cache below SQLite's default")
  func pageCacheCapped() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let store = try TaskStore.open(path: path, durability: .normal, historyLimit: 3)
    let writer = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
    let reader = try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
    #expect(writer == -TaskStore.pageCacheKibibytes)
    #expect(reader == -TaskStore.pageCacheKibibytes)
    #expect(TaskStore.pageCacheKibibytes < 2000)
    try store.close()
  }
}
