import BackgrounderTesting
import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import Backgrounder

/// What a long-running process gives back when it falls idle, and what it never buffers.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct IdleMemoryTests {
  @Test("releaseStoreMemory empties the writing connection's page cache; the store keeps working")
  func releaseStoreMemory() async throws {
    let h = try await Harness.start(
      workers: [:], fallback: RecordingWorker(), dispatchesWork: false)
    // In one call, not 300 awaits in a row: at the start of a whole run each await waited
    // behind the other tests' first steps, and 300 took this test past its time limit.
    let results = await h.backgrounder.schedule(
      (0..<300).map { (.oneTime(.init(taskId: id("test.idle.memory.n\($0)"))), .replace) })
    #expect(results.count == 300 && results.allSatisfy { $0 == .scheduled })
    let store = try #require(h.backgrounder.runtime?.store)
    let before = Self.pageCacheBytes(store)
    #expect(before > 64 * 1024, "300 tasks written: \(before) bytes of page cache")

    h.backgrounder.releaseStoreMemory()
    let after = Self.pageCacheBytes(store)
    #expect(after < before / 4, "after the release: \(after) bytes (\(before) before)")
    // The pages are read again when needed.
    let next = WorkRequest.OneTime(taskId: id("test.idle.memory.after"))
    #expect(await h.backgrounder.schedule(next) == .scheduled)
    #expect(try TaskStoreReader(path: h.storePath).tasks().count == 301)
  }

  @Test("a filtered event stream takes only the events it accepts")
  func filteredEventStream() async throws {
    let job = id("test.idle.events.filtered")
    let h = try await Harness.start(workers: [job: RecordingWorker()])
    let completions = h.backgrounder.events(where: { $0.kind.isWorkCompleted })
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    await h.waitFor(job) { $0.isWorkCompleted }
    await h.stop()
    var kinds: [MonitorEvent.Kind] = []
    for await event in completions { kinds.append(event.kind) }
    // Unfiltered, the stream also held `scheduled` and `workStarted`.
    #expect(kinds.count == 1 && kinds.allSatisfy(\.isWorkCompleted), "\(kinds)")
    #expect(h.events(job) { _ in true }.count > 1)
  }

  @Test("a value kept out of line is copied on write: copies never share a change")
  func outOfLineCopiesAreIndependent() {
    struct Holder {
      @OutOfLine var values: [Int]
    }
    var first = Holder(values: [1])
    let copy = first
    first.values.append(2)
    var second = copy
    second.values = [3]
    #expect(first.values == [1, 2])
    #expect(copy.values == [1])
    #expect(second.values == [3])
  }

  /// The writing connection's page cache in use (`SQLITE_DBSTATUS_CACHE_USED`).
  private static func pageCacheBytes(_ store: TaskStore) -> Int32 {
    store.pool.writeWithoutTransaction { db in
      var current: Int32 = 0
      var highest: Int32 = 0
      sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
      return current
    }
  }
}
