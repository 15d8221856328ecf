import Backgrounder
import BackgrounderTesting
import Foundation
import PhotoSync
import Testing

/// docs/library.md, step 5: the worker and its scheduling tested with the test kit: a manual
/// clock and fake network and power, no real network, no waiting.
@Suite struct PhotoSyncTests {
  /// The albums uploaded.
  actor Uploads {
    var albums: [String] = []
    func add(_ album: String) { albums.append(album) }
  }

  @Test func syncRunsOnceTheNetworkIsUnmetered() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("photo-sync-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let network = FakeNetworkSource(.metered)
    let backgrounder = Backgrounder(
      configuration: .init(
        storePath: directory.appendingPathComponent("work.sqlite").path, clock: ManualClock(),
        network: network, power: FakePowerSource(.externalPower)))
    let uploads = Uploads()
    try backgrounder.register([try PhotoSyncJobs.taskId(), try PhotoSyncJobs.onceId()]) { _ in
      PhotoSync { album in await uploads.add(album) }
    }
    // Before start: the recorder sees every event from the first.
    let recorder = EventRecorder(backgrounder)
    try await backgrounder.start()

    // Refused, with the reason: an interval below the 1-minute minimum.
    let refused = try await PhotoSyncJobs.scheduleSync(
      on: backgrounder, album: "Holidays", every: .seconds(30))
    #expect(refused?.code == .intervalTooShort)
    #expect(try await PhotoSyncJobs.scheduleSync(on: backgrounder, album: "Holidays") == nil)

    // Metered: the job waits at the network gate (the manual clock never times it out).
    #expect(backgrounder.scheduled().map(\.taskId) == [try PhotoSyncJobs.taskId()])
    #expect(await uploads.albums.isEmpty)

    network.set(.unmetered)
    await recorder.wait { event in
      if case .workCompleted(_, .success, _) = event.kind { return true }
      return false
    }
    #expect(await uploads.albums == ["Holidays"])
    #expect(recorder.events.contains { $0.kind == .workStarted(attempt: 0) })

    // A one-time sync, its outcome ignored.
    try await PhotoSyncJobs.syncOnce(on: backgrounder, album: "Pets")
    await recorder.wait(count: 2) { event in
      if case .workCompleted(_, .success, _) = event.kind { return true }
      return false
    }
    #expect(await uploads.albums == ["Holidays", "Pets"])
    await backgrounder.shutdown()
  }
}
