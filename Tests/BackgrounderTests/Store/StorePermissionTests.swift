import Foundation
import Testing

@testable import Backgrounder

@Suite(.timeLimit(.minutes(3)))
struct StorePermissionTests {
  private func mode(_ path: String) -> mode_t? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return status.st_mode & 0o777
  }

  @Test("the store, its WAL and SHM are created 0600 whatever the umask")
  func storeFilesArePrivate() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    let previous = umask(0o022)
    defer { umask(previous) }
    let backgrounder = Backgrounder(storePath: path)
    let id = try TaskId("dev.example.private")
    try backgrounder.register(id) { nil }
    try await backgrounder.start()
    let outcome = await backgrounder.schedule(
      WorkRequest.OneTime(taskId: id, initialDelay: .seconds(3600)))
    #expect(outcome == .scheduled)
    for file in [path, path + "-wal", path + "-shm"] {
      #expect(mode(file) == 0o600, "\(file)")
    }
    await backgrounder.shutdown()
    #expect(mode(path) == 0o600)
  }

  @Test("an existing store file keeps its mode; the library does not take over other files")
  func existingFileIsLeftAsIs() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("store.sqlite").path
    #expect(FileManager.default.createFile(atPath: path, contents: nil))
    #expect(chmod(path, 0o640) == 0)
    let backgrounder = Backgrounder(storePath: path)
    try await backgrounder.start()
    await backgrounder.shutdown()
    #expect(mode(path) == 0o640)
  }
}
