import Foundation
import GRDB
import GRDBSQLite

/// Reads every task as `status` shows it with two statements stepped through SQLite's C API:
/// one walk of the `task` table (only the columns a ``TaskStatus`` holds, read by position) and
/// one for the recent runs of every task. Through GRDB's `Row` and ``TaskRow`` the same 1,000
/// tasks cost several times more (a generic decode per column, every column of the table), and
/// one bound run lookup per task cost more than the single statement. A value of the wrong type or
/// outside its set is a corrupt-store ``StoreError`` naming the task and the column, as
/// ``TaskRow`` reports it.
enum TaskStatusQuery {
  /// Every task in `db`, sorted by id, with up to `historyLimit` recent runs each, newest first;
  /// each task's input only when `includingInput` (else empty).
  static func all(
    _ db: Database, now: Date, historyLimit: Int, includingInput: Bool = true,
    of ids: Set<TaskId>? = nil
  ) throws -> [TaskStatus] {
    // In rowid order, sorted below: `ORDER BY id` walks the id index and seeks every row from
    // it, three times the work of the plain walk.
    // A store not migrated yet (its daemon is older) has no windows or inhibit policy.
    let hasWindows = try taskHasColumn("windows", db)
    let hasInhibit = try taskHasColumn("inhibit", db)
    let hasPause = try taskHasColumn("pausedAt", db)
    let hasRelax = try taskHasColumn("waitingSince", db)
    let zone = CalendarTimeZones.local()
    let filter = ids.map { "WHERE id IN (\(databaseQuestionMarks(count: $0.count)))" } ?? ""
    let tasks = try db.makeStatement(
      sql: """
        SELECT id, kind, state, nextRun, attempt, deferrals, lastResult, lastReason,
          lastRunStartedAt, lastRunEndedAt, blockedOn, ephemeral, \(includingInput ? "input" : "x''"),
          \(hasWindows ? "windows" : "''"), \(hasInhibit ? "inhibit" : "'delay'"),
          \(hasPause ? "pausedAt, pauseReason" : "NULL, NULL"),
          \(hasRelax ? "waitingSince, relaxation" : "NULL, NULL")
        FROM task \(filter)
        """)
    if let ids { try tasks.setArguments(StatementArguments(ids.map(\.rawValue))) }
    var statuses: [TaskStatus] = []
    var columns = ColumnCursor(tasks.sqliteStatement)
    defer { sqlite3_reset(tasks.sqliteStatement) }
    while try columns.step(db) {
      statuses.append(try status(&columns, now: now, zone: zone))
    }
    // SQLite's order for TEXT (BINARY collation): the UTF-8 bytes compared.
    statuses.sort { first, second in
      var secondId = second.id.rawValue
      return secondId.withUTF8 { compareUTF8(first.id.rawValue, UnsafeRawBufferPointer($0)) < 0 }
    }
    if historyLimit > 0 { try attachRecentRuns(to: &statuses, limit: historyLimit, db) }
    return statuses
  }

  /// Whether the `task` table of `db` has `column`, looked up in the schema SQLite has parsed
  /// (`sqlite3_table_column_metadata`). GRDB's `columns(in:)` compiles and steps a `PRAGMA`
  /// through its authorizer for the same answer: 6 % of a one-shot `status`'s instructions.
  /// Any other failure than "no such column" (a busy or damaged file) is an error, as the
  /// statement's would be, not a column taken for missing.
  private static func taskHasColumn(_ column: String, _ db: Database) throws -> Bool {
    let code = sqlite3_table_column_metadata(
      db.sqliteConnection, "main", "task", column, nil, nil, nil, nil, nil)
    switch code {
    case SQLITE_OK: return true
    case SQLITE_ERROR: return false
    default:
      throw DatabaseError(
        resultCode: ResultCode(rawValue: code),
        message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }
  }

  /// One row of the task statement, columns in the order of its `SELECT`.
  private static func status(_ row: inout ColumnCursor, now: Date, zone: CalendarTimeZone)
    throws(StoreError) -> TaskStatus
  {
    let rawId = try row.text(0, "id")
    row.taskId = rawId
    let id: TaskId
    do {
      id = try TaskId(rawId)
    } catch {
      throw row.corrupt("id", "holds an invalid task id: \(error)")
    }
    let state: TaskState = try row.value(2, "state")
    let nextRun = try row.instant(3, "nextRun")?.date
    let blocked = try row.text(10, "blockedOn")
    guard let blockedOn = TaskRow.decode(blocked) else {
      throw row.corrupt("blockedOn", "holds an unknown predicate in \"\(blocked)\"")
    }
    let windowsText = try row.text(13, "windows")
    guard let windows = TaskRow.decodeWindows(windowsText) else {
      throw row.corrupt("windows", "holds an invalid window in \"\(windowsText)\"")
    }
    let predicates = TaskStatus.pendingPredicates(
      blockedOn: blockedOn, state: state, nextRun: nextRun, now: now, windows: windows,
      zone: zone)
    var relaxesAt: Date?
    // Only a waiting task's relaxation is decoded (most tasks have none).
    if let since = try row.instant(17, "waitingSince"),
      let text = try row.optionalText(18, "relaxation")
    {
      guard let relaxation = TaskRow.decodeRelaxation(text) else {
        throw row.corrupt("relaxation", "holds an unreadable relaxation \"\(text)\"")
      }
      relaxesAt = TaskStatus.relaxDate(waitingSince: since, relaxation: relaxation, state: state)
    }
    var status = TaskStatus(
      id: id, kind: try row.value(1, "kind"), state: state,
      nextRun: state.isFinished ? nil : TaskStatus.windowOpening(in: predicates) ?? nextRun,
      attempt: try row.int(4, "attempt"), deferrals: try row.int(5, "deferrals"),
      lastResult: try row.optionalValue(6, "lastResult"),
      lastReason: try row.optionalText(7, "lastReason"),
      pendingPredicates: predicates,
      ephemeral: try row.int(11, "ephemeral") != 0,
      lastRunStartedAt: try row.instant(8, "lastRunStartedAt")?.date,
      lastRunEndedAt: try row.instant(9, "lastRunEndedAt")?.date,
      recentRuns: [], inhibitPolicy: try row.value(14, "inhibit"),
      serializedInput: try row.blob(12, "input"), relaxesAt: relaxesAt)
    status.pausedSince = try row.instant(15, "pausedAt")?.date
    status.pauseReason = try row.optionalValue(16, "pauseReason")
    return status
  }

  /// Gives each of `statuses` (sorted by id) its newest `limit` runs, newest first, from one
  /// statement: for each task in id order, the ids of its newest runs from the covering index
  /// `run(taskId, id)`, then those rows. The work grows with the runs shown, not with the runs
  /// kept (a walk of the whole run table reads all 20 kept runs of each task for 5 shown).
  private static func attachRecentRuns(
    to statuses: inout [TaskStatus], limit: Int, _ db: Database
  ) throws {
    let runs = try db.makeStatement(
      sql: """
        SELECT task.id, run.attempt, run.startedAt, run.endedAt, run.outcome, run.reason
        FROM task JOIN run ON run.id IN (
          SELECT id FROM run WHERE taskId = task.id ORDER BY id DESC LIMIT ?)
        ORDER BY task.id, run.id DESC
        """)
    let handle = runs.sqliteStatement
    defer { sqlite3_reset(handle) }
    sqlite3_bind_int64(handle, 1, Int64(limit))
    var row = ColumnCursor(handle, table: "run")
    var position = statuses.startIndex
    while try row.step(db) {
      guard let text = sqlite3_column_text(handle, 0) else { continue }
      let taskId = UnsafeRawBufferPointer(
        start: text, count: Int(sqlite3_column_bytes(handle, 0)))
      // Both in the same order: a task before this run's has no more runs.
      var order = Int32(-1)
      while position < statuses.endIndex {
        order = compareUTF8(statuses[position].id.rawValue, taskId)
        guard order < 0 else { break }
        position += 1
      }
      guard order == 0 else { continue }
      row.taskId = statuses[position].id.rawValue
      if statuses[position].recentRuns.isEmpty {
        statuses[position].recentRuns.reserveCapacity(min(limit, 16))
      }
      statuses[position].recentRuns.append(try runRecord(row))
    }
  }

  /// `text`'s UTF-8 bytes against `bytes` as SQLite's BINARY collation orders them: negative,
  /// zero or positive.
  private static func compareUTF8(_ text: String, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    var text = text
    return text.withUTF8 { utf8 in
      let common = min(utf8.count, bytes.count)
      if common > 0, let start = utf8.baseAddress, let other = bytes.baseAddress {
        let order = memcmp(start, other, common)
        if order != 0 { return order }
      }
      return utf8.count < bytes.count ? -1 : utf8.count > bytes.count ? 1 : 0
    }
  }

  /// The current row of the run statement (its columns after `taskId`).
  private static func runRecord(_ row: ColumnCursor) throws(StoreError) -> RunRecord {
    guard let endedAt = try row.instant(3, "endedAt") else {
      throw row.corrupt("endedAt", "is NULL")
    }
    return RunRecord(
      attempt: try row.int(1, "attempt"), startedAt: try row.instant(2, "startedAt")?.date,
      endedAt: endedAt.date, outcome: try row.text(4, "outcome"),
      reason: try row.optionalText(5, "reason"))
  }
}

extension TaskStatus {
  /// What a task waits for as `status` shows it: the predicates the dispatcher recorded, plus
  /// the backoff or earliest-begin time while that is still ahead of `now`.
  /// When the window a task waits for opens (its next run), if it waits for one.
  static func windowOpening(in predicates: [PendingPredicate]) -> Date? {
    for case .waitingForWindow(let opens) in predicates { return opens }
    return nil
  }

  static func pendingPredicates(
    blockedOn: [PendingPredicate], state: TaskState, nextRun: Date?, now: Date,
    windows: [TimeWindow] = [], zone: CalendarTimeZone = .utc
  ) -> [PendingPredicate] {
    var predicates = blockedOn
    if !state.isFinished && state != .running, let next = nextRun, !windows.isEmpty {
      // Due (or next) outside its windows: it waits for the next one to open.
      let start = WallInstant(max(next, now))
      let opening = windows.nextOpening(atOrAfter: start, in: zone)
      if opening > start {
        predicates.append(.waitingForWindow(opens: opening.date))
        return predicates
      }
    }
    if !state.isFinished && state != .running, let next = nextRun, next > now {
      predicates.append(
        state == .backoff
          ? .waitingForBackoff(until: next) : .waitingForEarliestBeginDate(at: next))
    }
    return predicates
  }
}

/// The current row of a raw SQLite statement, read by column position with the checks
/// ``TaskRow``'s decoding makes (GRDB's conversions: an integer column may hold a whole REAL,
/// a text column may hold UTF-8 as a BLOB).
private struct ColumnCursor {
  let handle: OpaquePointer
  /// `task` or `run`, for error messages.
  let table: String
  var taskId = "(unknown id)"

  init(_ handle: OpaquePointer, table: String = "task") {
    self.handle = handle
    self.table = table
  }

  /// Moves to the next row; false after the last.
  func step(_ db: Database) throws -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let code:
      throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
    }
  }

  func optionalInt64(_ index: Int32, _ column: String) throws(StoreError) -> Int64? {
    switch sqlite3_column_type(handle, index) {
    case SQLITE_NULL: return nil
    case SQLITE_INTEGER: return sqlite3_column_int64(handle, index)
    case SQLITE_FLOAT:
      let value = sqlite3_column_double(handle, index)
      guard let whole = Int64(exactly: value) else {
        throw corrupt(column, "holds \(value), which is not a valid Int64")
      }
      return whole
    default:
      throw corrupt(column, "holds \(describe(index)), which is not a valid Int64")
    }
  }

  func int(_ index: Int32, _ column: String) throws(StoreError) -> Int {
    guard let value = try optionalInt64(index, column) else { throw corrupt(column, "is NULL") }
    guard let int = Int(exactly: value) else {
      throw corrupt(column, "holds \(value), which is not a valid Int")
    }
    return int
  }

  func instant(_ index: Int32, _ column: String) throws(StoreError) -> WallInstant? {
    try optionalInt64(index, column).map(WallInstant.init(nanosecondsSince1970:))
  }

  func optionalText(_ index: Int32, _ column: String) throws(StoreError) -> String? {
    let type = sqlite3_column_type(handle, index)
    switch type {
    case SQLITE_NULL: return nil
    case SQLITE_TEXT, SQLITE_BLOB:
      let count = Int(sqlite3_column_bytes(handle, index))
      guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return "" }
      let buffer = UnsafeRawBufferPointer(start: bytes, count: count)
      if type == SQLITE_TEXT { return String(decoding: buffer, as: UTF8.self) }
      guard let text = String(validating: buffer, as: UTF8.self) else {
        throw corrupt(column, "holds a BLOB that is not UTF-8 text")
      }
      return text
    default:
      throw corrupt(column, "holds \(describe(index)), which is not a valid String")
    }
  }

  func text(_ index: Int32, _ column: String) throws(StoreError) -> String {
    guard let text = try optionalText(index, column) else { throw corrupt(column, "is NULL") }
    return text
  }

  func optionalValue<T: RawRepresentable>(_ index: Int32, _ column: String) throws(StoreError)
    -> T? where T.RawValue == String
  {
    guard let raw = try optionalText(index, column) else { return nil }
    guard let value = T(rawValue: raw) else {
      throw corrupt(column, "holds unknown value \"\(raw)\"")
    }
    return value
  }

  func value<T: RawRepresentable>(_ index: Int32, _ column: String) throws(StoreError) -> T
  where T.RawValue == String {
    guard let value: T = try optionalValue(index, column) else {
      throw corrupt(column, "is NULL")
    }
    return value
  }

  func blob(_ index: Int32, _ column: String) throws(StoreError) -> Data {
    switch sqlite3_column_type(handle, index) {
    case SQLITE_NULL: throw corrupt(column, "is NULL")
    case SQLITE_BLOB, SQLITE_TEXT:
      let count = Int(sqlite3_column_bytes(handle, index))
      guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
      return Data(bytes: bytes, count: count)
    default:
      throw corrupt(column, "holds \(describe(index)), which is not a valid Data")
    }
  }

  func corrupt(_ column: String, _ problem: String) -> StoreError {
    let owner = table == "task" ? "task \(taskId)" : "run of task \(taskId)"
    return .corrupt(path: "", detail: "\(owner): column \(column) \(problem)")
  }

  private func describe(_ index: Int32) -> String {
    switch sqlite3_column_type(handle, index) {
    case SQLITE_INTEGER: "\(sqlite3_column_int64(handle, index))"
    case SQLITE_FLOAT: "\(sqlite3_column_double(handle, index))"
    case SQLITE_BLOB: "a BLOB"
    default: "\"\(sqlite3_column_text(handle, index).map { String(cString: $0) } ?? "")\""
    }
  }
}
