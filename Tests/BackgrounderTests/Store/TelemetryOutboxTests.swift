import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// The store's telemetry outbox: bounded, oldest dropped first and counted, a delivered batch
/// removed with the drops it reported, a batch not delivered kept.
@Suite(.timeLimit(.minutes(3)))
struct TelemetryOutboxTests {
  private func store() throws -> DatabaseQueue {
    let queue = try DatabaseQueue()
    try Schema.migrator.migrate(queue)
    return queue
  }

  @Test("past its capacity the outbox drops the oldest rows and counts them")
  func boundedOldestDropped() throws {
    let queue = try store()
    try queue.write { db in
      for index in 1...7 { try TelemetryOutbox.append(db, payload: "run \(index)", capacity: 5) }
    }
    let batch = try #require(try queue.read { try TelemetryOutbox.batch($0, limit: 100) })
    #expect(batch.payloads == ["run 3", "run 4", "run 5", "run 6", "run 7"])
    #expect(batch.dropped == 2)
  }

  @Test("a delivered batch is removed with the drops it reported; later rows stay")
  func acknowledgedBatchRemoved() throws {
    let queue = try store()
    try queue.write { db in
      for index in 1...4 { try TelemetryOutbox.append(db, payload: "run \(index)", capacity: 3) }
    }
    let batch = try #require(try queue.read { try TelemetryOutbox.batch($0, limit: 2) })
    #expect(batch.payloads == ["run 2", "run 3"])
    #expect(batch.dropped == 1)
    // A run ends (and a drop happens) while the batch is being sent.
    try queue.write { db in
      try TelemetryOutbox.append(db, payload: "run 5", capacity: 3)
      try TelemetryOutbox.acknowledge(db, batch)
    }
    let rest = try #require(try queue.read { try TelemetryOutbox.batch($0, limit: 100) })
    #expect(rest.payloads == ["run 4", "run 5"])
    #expect(rest.dropped == 1)
    try queue.write { db in try TelemetryOutbox.acknowledge(db, rest) }
    #expect(try queue.read { try TelemetryOutbox.batch($0, limit: 100) } == nil)
  }

  @Test("a batch that was not acknowledged is read again, rows and drop count unchanged")
  func unacknowledgedBatchKept() throws {
    let queue = try store()
    try queue.write { db in
      for index in 1...3 { try TelemetryOutbox.append(db, payload: "run \(index)", capacity: 2) }
    }
    let first = try queue.read { try TelemetryOutbox.batch($0, limit: 100) }
    let second = try queue.read { try TelemetryOutbox.batch($0, limit: 100) }
    #expect(first != nil)
    #expect(first == second)
    #expect(second?.dropped == 1)
  }

  @Test("the runtime keeps the outbox in its store across a restart")
  func outboxSurvivesRestart() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let first = Backgrounder(storePath: path)
    try await first.start()
    try await first.appendTelemetry("{\"job\":\"a\"}", capacity: 10)
    await first.shutdown()
    let second = Backgrounder(storePath: path)
    try await second.start()
    let batch = try await second.telemetryBatch(limit: 10)
    #expect(batch?.payloads == ["{\"job\":\"a\"}"])
    if let batch { try await second.acknowledgeTelemetry(batch) }
    #expect(try await second.telemetryBatch(limit: 10) == nil)
    await second.shutdown()
  }
}
