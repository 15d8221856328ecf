import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// A run's history record carries the bytes counted for it (`run_network_bytes`): matched by
/// task, attempt and a counting start within the run's span, so that a periodic job's runs
/// (attempt 0 each time) each get their own, and a run without a count gets none.
@Suite(.timeLimit(.minutes(3)))
struct RunNetworkHistoryTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)

  @Test("each run record gets the bytes counted during it; a run without a count gets none")
  func historyCarriesEachRunsBytes() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let taskId = id("dev.example.bytes")
    let other = id("dev.example.other")
    let row = TaskRow(
      request: .periodic(WorkRequest.Periodic(taskId: taskId, interval: .seconds(3600))),
      input: Data(), now: t0)
    func at(_ seconds: Int64) -> WallInstant { t0.advanced(by: .seconds(seconds)) }
    func bytes(_ sent: Int64, metered: Bool) -> RunNetworkBytes {
      RunNetworkBytes(
        sent: sent, received: 7, meteredSent: metered ? sent : 0, meteredReceived: metered ? 7 : 0,
        accounting: .link)
    }
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5)
    defer { try? store.close() }
    try store.pool.write { db in
      try TaskStore.apply(
        [
          .upsert(row),
          // Three runs of attempt 0 (a periodic job), then one never started.
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: at(0), endedAt: at(10), outcome: "success",
              reason: nil)),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: at(100), endedAt: at(110),
              outcome: "success", reason: nil)),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: at(200), endedAt: at(210),
              outcome: "success", reason: nil)),
          .appendRun(
            RunRow(
              taskId: taskId, attempt: 0, startedAt: nil, endedAt: at(300), outcome: "deferred",
              reason: "network gate: offline")),
        ], in: db, historyLimit: 5)
      // Counted in the first and the third run (just after their start), and another task's
      // run in the second's span.
      for record in [
        RunNetworkRecord(
          taskId: taskId, attempt: 0, startedAt: at(0).advanced(by: .milliseconds(3)),
          at: at(9), bytes: bytes(1000, metered: true)),
        RunNetworkRecord(
          taskId: other, attempt: 0, startedAt: at(101), at: at(105),
          bytes: bytes(5, metered: false)),
        RunNetworkRecord(
          taskId: taskId, attempt: 0, startedAt: at(201), at: at(209),
          bytes: bytes(3000, metered: false)),
      ] {
        try MeteredUsageStore.insert(db, record)
      }
    }
    let runs = try #require(try TaskStoreReader(path: path).task(taskId)?.recentRuns)
    try #require(runs.count == 4)
    #expect(runs[0].network == nil, "a run never started counts nothing")
    #expect(runs[1].network == bytes(3000, metered: false))
    #expect(runs[2].network == nil, "another task's count in its span is not its own")
    #expect(runs[3].network == bytes(1000, metered: true))
    // `status` reads no history bytes into its JSON.
    let json = String(decoding: try JSONEncoder().encode(runs[3]), as: UTF8.self)
    #expect(!json.contains("1000"), "\(json)")
  }

  /// A run's bytes go through the store's writer (``StoreOp/recordNetworkBytes(_:)``), so they
  /// share the transaction of the run's outcome: one commit (one fsync) for both, where a write
  /// of their own made two per run.
  @Test("a run's bytes are committed with its outcome, in one transaction")
  func bytesShareTheOutcomesCommit() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let taskId = id("dev.example.bytes")
    let store = try TaskStore.open(path: path, durability: .full, historyLimit: 5)
    defer { try? store.close() }
    let writer = StoreWriter(store: store, events: EventHub())
    let row = TaskRow(
      request: .periodic(WorkRequest.Periodic(taskId: taskId, interval: .seconds(3600))),
      input: Data(), now: t0)
    writer.enqueue([.upsert(row)], events: [])
    await writer.flush()
    let before = writer.statistics.commits
    let bytes = RunNetworkBytes(
      sent: 512, received: 64, meteredSent: 0, meteredReceived: 0, accounting: .link)
    writer.enqueue(
      [
        .recordNetworkBytes(
          RunNetworkRecord(
            taskId: taskId, attempt: 0, startedAt: t0.advanced(by: .seconds(1)),
            at: t0.advanced(by: .seconds(2)), bytes: bytes)),
        .appendRun(
          RunRow(
            taskId: taskId, attempt: 0, startedAt: t0, endedAt: t0.advanced(by: .seconds(3)),
            outcome: "success", reason: nil)),
      ], events: [])
    await writer.flush()
    #expect(writer.statistics.commits - before == 1)
    let runs = try #require(try TaskStoreReader(path: path).task(taskId)?.recentRuns)
    #expect(runs.map(\.network) == [bytes])
  }
}
