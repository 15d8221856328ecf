import Foundation
import GRDB

/// When each task was created and when it last succeeded, for staleness alerts
/// (`alert-after`).
///
/// The `run` table keeps only the newest runs of a task, so its last success can be pruned away
/// by a streak of failures. The `task_success` table keeps it: a trigger copies the end of every
/// successful run into it, and one on `task` removes it with its task (a task replaced through
/// `INSERT OR REPLACE` keeps it: SQLite fires delete triggers for those only with
/// `recursive_triggers`, which the store leaves off).
public struct TaskSuccess: Hashable, Sendable {
  /// The task.
  public var id: TaskId
  /// When the task was scheduled (its row created; a `replace` re-creates it).
  public var createdAt: Date
  /// When its last successful run ended, if it ever succeeded.
  public var lastSuccessAt: Date?
  /// The task's state.
  public var state: TaskState

  /// Creates a record.
  public init(id: TaskId, createdAt: Date, lastSuccessAt: Date?, state: TaskState) {
    self.id = id
    self.createdAt = createdAt
    self.lastSuccessAt = lastSuccessAt
    self.state = state
  }

  /// Keeps `task_success` up to date as runs are recorded (made again whenever `run` is).
  static let runSuccessTrigger = """
    CREATE TRIGGER run_success AFTER INSERT ON run WHEN NEW.outcome = 'success'
    BEGIN
      INSERT OR REPLACE INTO task_success (taskId, lastSuccessAt)
        VALUES (NEW.taskId, NEW.endedAt);
    END;
    """

  /// Creates the table and its triggers, filled from the runs the store still holds.
  static func createTable(_ db: Database) throws {
    try db.execute(
      sql: """
        CREATE TABLE task_success (
          taskId TEXT PRIMARY KEY NOT NULL,
          lastSuccessAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO task_success (taskId, lastSuccessAt)
          SELECT taskId, max(endedAt) FROM run
          WHERE outcome = 'success' AND taskId IN (SELECT id FROM task) GROUP BY taskId;
        \(runSuccessTrigger)
        CREATE TRIGGER task_success_gone AFTER DELETE ON task
        BEGIN
          DELETE FROM task_success WHERE taskId = OLD.id;
        END;
        """)
  }

  /// Every task in `db` (of `ids` only, when given) with its creation and last success, sorted
  /// by id.
  static func all(_ db: Database, of ids: Set<TaskId>? = nil) throws -> [TaskSuccess] {
    let only = ids.map(Array.init) ?? []
    let filter = ids == nil ? "" : "WHERE task.id IN (\(databaseQuestionMarks(count: only.count)))"
    let rows = try Row.fetchAll(
      db,
      sql: """
        SELECT task.id, task.scheduledAt, task_success.lastSuccessAt, task.state
        FROM task LEFT JOIN task_success ON task_success.taskId = task.id
        \(filter) ORDER BY task.id
        """, arguments: StatementArguments(only.map(\.rawValue)))
    return try rows.map { row in
      let rawId: String = row[0]
      let rawState: String = row[3]
      guard let id = try? TaskId(rawId), let state = TaskState(rawValue: rawState) else {
        throw StoreError.corrupt(path: "", detail: "task \(rawId) has an invalid id or state")
      }
      return TaskSuccess(
        id: id, createdAt: WallInstant(nanosecondsSince1970: row[1]).date,
        lastSuccessAt: (row[2] as Int64?).map { WallInstant(nanosecondsSince1970: $0).date },
        state: state)
    }
  }
}

extension Backgrounder {
  /// Every stored task with its creation time and last success (see ``TaskSuccess``), read
  /// through the runtime's own connection pool after all accepted changes are committed.
  /// Only those of `ids` (the ones stored) when given.
  public func storedSuccesses(of ids: Set<TaskId>? = nil) async throws -> [TaskSuccess] {
    guard let runtime else { throw LifecycleError.notStarted }
    await runtime.writer.flush()
    return try await runtime.store.read { db in try TaskSuccess.all(db, of: ids) }
  }
}

extension TaskStoreReader {
  /// Every task in the store with its creation time and last success (see ``TaskSuccess``);
  /// empty for a store created before the `i29-staleness` migration, until a daemon opens it.
  public func successes() throws -> [TaskSuccess] {
    try read { db in
      guard try db.tableExists("task_success") else { return [] }
      return try TaskSuccess.all(db)
    } ?? []
  }
}
