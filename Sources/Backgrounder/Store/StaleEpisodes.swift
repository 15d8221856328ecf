import Foundation
import GRDB

/// The stale episodes already reported, kept across restarts (`stale_episode`, migration
/// `i29-stale-episodes`): a job's episode is named by the time it is counted from (its last
/// success, or its creation), so a daemon that starts while a job is still stale knows its
/// `on-stale` hook and desktop notice were given for that episode, and does not give them again.
/// A row goes with its task.
enum StaleEpisodes {
  /// Creates the table and the trigger that removes a task's row with it.
  static func createTable(_ db: Database) throws {
    try db.execute(
      sql: """
        CREATE TABLE stale_episode (
          taskId TEXT PRIMARY KEY NOT NULL,
          since REAL NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER stale_episode_gone AFTER DELETE ON task
        BEGIN
          DELETE FROM stale_episode WHERE taskId = OLD.id;
        END;
        """)
  }

  /// Every stored episode: the job and the time it is counted from (seconds since 1970, the
  /// exact `Date` recorded, so it compares equal to the time it was recorded from). Rows whose
  /// id is not a valid task id are skipped (nothing the daemon wrote).
  static func all(_ db: Database) throws -> [TaskId: Date] {
    var episodes: [TaskId: Date] = [:]
    for row in try Row.fetchAll(db, sql: "SELECT taskId, since FROM stale_episode") {
      guard let id = try? TaskId(row[0] as String) else { continue }
      episodes[id] = Date(timeIntervalSince1970: row[1])
    }
    return episodes
  }

  /// Replaces every stored episode with `episodes`.
  static func replace(_ db: Database, with episodes: [TaskId: Date]) throws {
    try db.execute(sql: "DELETE FROM stale_episode")
    for (id, since) in episodes {
      try db.execute(
        sql: "INSERT INTO stale_episode (taskId, since) VALUES (?, ?)",
        arguments: [id.rawValue, since.timeIntervalSince1970])
    }
  }
}

extension Backgrounder {
  /// The stale episodes recorded with ``recordStaleEpisodes(_:)``: each job that was stale,
  /// with the time its episode is counted from.
  public func storedStaleEpisodes() async throws -> [TaskId: Date] {
    guard let runtime else { throw LifecycleError.notStarted }
    return try await runtime.store.read { db in try StaleEpisodes.all(db) }
  }

  /// Records `episodes` (every job stale now, with the time its episode is counted from) in
  /// place of the ones recorded before.
  public func recordStaleEpisodes(_ episodes: [TaskId: Date]) async throws {
    guard let runtime else { throw LifecycleError.notStarted }
    try await runtime.store.write { db in try StaleEpisodes.replace(db, with: episodes) }
  }
}
