import Foundation
import Testing

@testable import Backgrounder

/// The runtime's own writes (task rows) are refused once the store file was deleted or
/// replaced; so are the writes of the other records it keeps (stale episodes, the telemetry
/// outbox, counted bytes), which go through the same checked write: what is committed to a
/// file nobody opens again is lost.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct StoreReplacedWritesTests {
  @Test("a replaced store file refuses stale-episode and telemetry writes; they roll back")
  func replacedStoreRefusesRecordWrites() async throws {
    let harness = try await Harness.start(workers: [:])
    let backgrounder = harness.backgrounder
    let job = try TaskId("dev.test.stale")
    try await backgrounder.recordStaleEpisodes([job: harness.t0])
    #expect(try await backgrounder.storedStaleEpisodes() == [job: harness.t0])
    try await backgrounder.appendTelemetry("run 1", capacity: 10)

    let other = harness.directory.appendingPathComponent("other.sqlite").path
    #expect(FileManager.default.createFile(atPath: other, contents: Data()))
    #expect(rename(other, harness.storePath) == 0)

    await expectRefused("stale episodes") { try await backgrounder.recordStaleEpisodes([:]) }
    await expectRefused("telemetry") {
      try await backgrounder.appendTelemetry("run 2", capacity: 10)
    }
    // Rolled back: the file the runtime still has open kept the episode.
    #expect(try await backgrounder.storedStaleEpisodes() == [job: harness.t0])
  }

  private func expectRefused(_ what: String, _ write: () async throws -> Void) async {
    do {
      try await write()
      Issue.record("\(what): written to a replaced store")
    } catch let error as StoreError {
      #expect(error.code == .replaced, "\(what): \(error)")
    } catch {
      Issue.record("\(what): \(error)")
    }
  }
}
