import Backgrounder
import Foundation
import Testing

@testable import BackgrounderCLI

/// The tasks section keeps its store connection between reads (`status --watch`), and opens the
/// store again when the file at the path is another one.
@Suite struct TaskSectionTests {
  /// A store at `path` holding the one-time tasks `ids` (none run: the runtime does not dispatch).
  private func makeStore(at path: String, ids: [String]) async throws {
    var configuration = Backgrounder.Configuration(storePath: path)
    configuration.dispatchesWork = false
    let backgrounder = Backgrounder(configuration: configuration)
    try await backgrounder.start()
    for id in ids {
      let outcome = await backgrounder.schedule(WorkRequest.OneTime(taskId: try TaskId(id)))
      #expect(outcome == .scheduled)
    }
    await backgrounder.shutdown()
  }

  @Test func theConnectionIsKeptUntilTheStoreIsReplaced() async throws {
    let directory = NSTemporaryDirectory() + "bg-task-section-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let storePath = directory + "/state.sqlite"
    try await makeStore(at: storePath, ids: ["dev.test.first"])
    try await makeStore(at: directory + "/other.sqlite", ids: ["dev.test.second"])
    let section = TaskSection(storePath: storePath)

    for _ in 0..<3 {
      #expect(section.read(now: Date())?.map(\.id.rawValue) == ["dev.test.first"])
    }
    #expect(section.opens == 1)

    // Replaced by rename, as an operator restoring a backup would.
    #expect(rename(directory + "/other.sqlite", storePath) == 0)
    #expect(section.read(now: Date())?.map(\.id.rawValue) == ["dev.test.second"])
    #expect(section.opens == 2)
    #expect(!section.failed)
  }
}
