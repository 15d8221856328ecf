import Foundation
import GRDB
import Testing

@testable import Backgrounder

/// A store caught between GRDB's `grdb_migrations` table and the first migration (being created
/// right now, or its creator killed at that moment) is an uninitialized store, not a foreign file.
@Suite(.timeLimit(.minutes(3)))
struct StoreFirstMigrationTests {
  /// A file in the state GRDB leaves between creating `grdb_migrations` and committing v1.
  private func halfCreatedStore() throws -> (directory: URL, path: String) {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("store.sqlite").path
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { db in
      try db.execute(
        sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
    }
    try queue.close()
    return (directory, path)
  }

  @Test("the reader sees no tasks in a store whose first migration has not committed")
  func readerSeesNoTasks() throws {
    let (directory, path) = try halfCreatedStore()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reader = try TaskStoreReader(path: path)
    #expect(try reader.tasks().isEmpty)
    #expect(try reader.task(TaskId("dev.example.any")) == nil)
  }

  @Test("the runtime finishes creating a store whose first migration did not commit")
  func runtimeCompletesTheMigration() async throws {
    let (directory, path) = try halfCreatedStore()
    defer { try? FileManager.default.removeItem(at: directory) }
    let backgrounder = Backgrounder(storePath: path)
    try await backgrounder.start()
    await backgrounder.shutdown()
    #expect(try TaskStoreReader(path: path).tasks().isEmpty)
  }

  @Test("a grdb_migrations table with entries but no Backgrounder schema is still refused")
  func foreignGRDBDatabaseIsRefused() throws {
    let (directory, path) = try halfCreatedStore()
    defer { try? FileManager.default.removeItem(at: directory) }
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('other-app-v1')")
    }
    try queue.close()
    #expect {
      try TaskStoreReader(path: path)
    } throws: { error in
      (error as? StoreError)?.code == .notABackgrounderStore
    }
  }
}
