import Foundation
import GRDB

/// ``TaskRow`` read from and written to the `task` table by column name.
extension TaskRow: FetchableRecord, PersistableRecord {
  static let databaseTableName = "task"

  /// The columns of the `task` table (see ``Schema``), one case per column.
  enum Columns: String, ColumnExpression, CaseIterable {
    case id, kind, state, nextRun, attempt, deferrals, lastResult, lastReason
    case lastRunStartedAt, lastRunEndedAt, blockedOn, ephemeral, network
    case requiresCharging, requiresBatteryNotLow, interval, flexWindow, initialDelay
    case expedited, budget, backoffKind, backoffInitial, backoffMaxAttempts, backoffJitter
    case input, scheduledAt, updatedAt
    case windows, windowEnd, calendar, lastElapse
    case allowedNetworks, requiredMount
    case requiredReachable
    case inhibit
    case onConditionLost, pauseMax, pausedAt, pauseReason
    case relaxation, waitingSince
    case meteredBudget
    case requiresIdle, onUserReturn

    /// The column's place in ``allCases`` (a jump table: positions are looked up for every
    /// column of every row read, and a dictionary keyed by the case hashed its name each time).
    var ordinal: Int {
      switch self {
      case .id: 0
      case .kind: 1
      case .state: 2
      case .nextRun: 3
      case .attempt: 4
      case .deferrals: 5
      case .lastResult: 6
      case .lastReason: 7
      case .lastRunStartedAt: 8
      case .lastRunEndedAt: 9
      case .blockedOn: 10
      case .ephemeral: 11
      case .network: 12
      case .requiresCharging: 13
      case .requiresBatteryNotLow: 14
      case .interval: 15
      case .flexWindow: 16
      case .initialDelay: 17
      case .expedited: 18
      case .budget: 19
      case .backoffKind: 20
      case .backoffInitial: 21
      case .backoffMaxAttempts: 22
      case .backoffJitter: 23
      case .input: 24
      case .scheduledAt: 25
      case .updatedAt: 26
      case .windows: 27
      case .windowEnd: 28
      case .calendar: 29
      case .lastElapse: 30
      case .allowedNetworks: 31
      case .requiredMount: 32
      case .requiredReachable: 33
      case .inhibit: 34
      case .onConditionLost: 35
      case .pauseMax: 36
      case .pausedAt: 37
      case .pauseReason: 38
      case .relaxation: 39
      case .waitingSince: 40
      case .meteredBudget: 41
      case .requiresIdle: 42
      case .onUserReturn: 43
      }
    }
  }

  /// Decodes a `task` row. A missing column, a NULL where a value is required, or a value of
  /// the wrong type or outside its set (say `attempt = 'x'`) is a corrupt-store
  /// ``StoreError`` naming the task and the column — never a silent default.
  init(row: Row) throws {
    try self.init(row: row, positions: TaskColumnPositions(columnNames: row.columnNames))
  }

  /// The rows `request` selects, each column found by name once for the whole query rather
  /// than once per row (starting with 10,000 tasks reads 10,000 rows).
  static func fetchAllByName(_ db: Database, _ request: QueryInterfaceRequest<TaskRow>) throws
    -> [TaskRow]
  {
    let cursor = try Row.fetchCursor(db, request)
    var positions: TaskColumnPositions?
    var rows: [TaskRow] = []
    while let row = try cursor.next() {
      let found = positions ?? TaskColumnPositions(columnNames: row.columnNames)
      positions = found
      rows.append(try TaskRow(row: row, positions: found))
    }
    return rows
  }

  private init(row: Row, positions: TaskColumnPositions) throws {
    var reader = ColumnReader(row: row, positions: positions)
    let rawId: String = try reader.required(.id)
    reader.taskId = rawId
    do {
      id = try TaskId(rawId)
    } catch {
      throw reader.corrupt(.id, "holds an invalid task id: \(error)")
    }
    kind = try reader.required(.kind, TaskKind.self)
    state = try reader.required(.state, TaskState.self)
    nextRun = try reader.instant(.nextRun)
    attempt = try reader.required(.attempt)
    deferrals = try reader.required(.deferrals)
    lastResult = try reader.optional(.lastResult, LastResult.self)
    lastReason = try reader.optional(.lastReason)
    lastRunStartedAt = try reader.instant(.lastRunStartedAt)
    lastRunEndedAt = try reader.instant(.lastRunEndedAt)
    let blocked: String = try reader.required(.blockedOn)
    guard let predicates = Self.decode(blocked) else {
      throw reader.corrupt(.blockedOn, "holds an unknown predicate in \"\(blocked)\"")
    }
    blockedOn = predicates
    ephemeral = try reader.required(.ephemeral)
    let windowsText: String = try reader.required(.windows)
    guard let windows = Self.decodeWindows(windowsText) else {
      throw reader.corrupt(.windows, "holds an invalid window in \"\(windowsText)\"")
    }
    constraints = WorkConstraints(
      networkRequired: try reader.required(.network, NetworkRequirement.self),
      requiresCharging: try reader.required(.requiresCharging),
      requiresBatteryNotLow: try reader.required(.requiresBatteryNotLow), windows: windows,
      windowEnd: try reader.required(.windowEnd, WindowEnd.self),
      allowedNetworks: try reader.allowList(),
      requiredMount: try reader.optional(.requiredMount),
      requiredReachable: try reader.optional(.requiredReachable),
      relaxation: try reader.relaxation())
    constraints.onConditionLost = try reader.conditionLoss()
    constraints.meteredBudget = try reader.meteredBudget()
    constraints.requiresIdle = try reader.duration(.requiresIdle)
    constraints.onUserReturn = try reader.required(.onUserReturn, UserReturnPolicy.self)
    waitingSince = try reader.instant(.waitingSince)
    if let calendarText: String = try reader.optional(.calendar) {
      guard let schedule = Self.decodeCalendar(calendarText) else {
        throw reader.corrupt(.calendar, "holds an invalid calendar \"\(calendarText)\"")
      }
      calendarStorage = OutOfLine(wrappedValue: schedule)
    }
    lastElapse = try reader.instant(.lastElapse)
    interval = try reader.duration(.interval)
    flexWindow = try reader.duration(.flexWindow)
    initialDelay = try reader.duration(.initialDelay) ?? .zero
    hint =
      try reader.optional(.expedited, QuotaExhaustedPolicy.self)
      .map { .expedited(onQuotaExhausted: $0) } ?? .standard
    guard let budget = try reader.duration(.budget) else {
      throw reader.corrupt(.budget, "is NULL")
    }
    self.budget = budget
    guard let initial = try reader.duration(.backoffInitial) else {
      throw reader.corrupt(.backoffInitial, "is NULL")
    }
    backoff = BackoffPolicy(
      kind: try reader.required(.backoffKind, BackoffPolicy.Kind.self), initialDelay: initial,
      maxAttempts: try reader.required(.backoffMaxAttempts),
      jitter: try reader.required(.backoffJitter))
    input = try reader.required(.input)
    guard let scheduledAt = try reader.instant(.scheduledAt) else {
      throw reader.corrupt(.scheduledAt, "is NULL")
    }
    self.scheduledAt = scheduledAt
    guard let updatedAt = try reader.instant(.updatedAt) else {
      throw reader.corrupt(.updatedAt, "is NULL")
    }
    self.updatedAt = updatedAt
    inhibitPolicy = try reader.required(.inhibit, InhibitPolicy.self)
    pausedAt = try reader.instant(.pausedAt)
    pauseReason = try reader.optional(.pauseReason, StopReason.self)
  }

  /// Writes this row with one statement (prepared once per connection), an upsert that
  /// updates an existing row in place, its values bound straight through SQLite's C API: GRDB's
  /// `StatementArguments` boxed, validated and copied each value, which was most of the
  /// upsert's time (`perf`: 12 % of all samples of the dispatch benchmark).
  ///
  /// Not `INSERT OR REPLACE`: that deletes the row and inserts it again, so each write also
  /// rewrote the primary key's index and the `state` index. Measured on a store of 1,000 jobs
  /// (a run's end: this row, its run and its network bytes in one transaction), 13.1–13.7 WAL
  /// frames per commit with the replace, 10.4–10.5 with the upsert (issue #35).
  func upsert(_ db: Database, _ statements: WriterStatements) throws {
    let statement = try statements.statement(.upsertTask, in: db) { Self.upsertSQL }
    try statement.run(in: db) { bind in
      for (index, column) in Columns.allCases.enumerated() {
        bind(Int32(index + 1), databaseValue(column))
      }
    }
  }

  /// Records that the worker of this row's run was invoked (a claim made ahead of a free worker
  /// is written before that): only the columns the start changes.
  func markStarted(_ db: Database, _ statements: WriterStatements) throws {
    let statement = try statements.statement(.markStarted, in: db) {
      """
      UPDATE task SET state = ?, lastRunStartedAt = ?, blockedOn = ?, deferrals = ?,
        updatedAt = ? WHERE id = ?
      """
    }
    try statement.run(in: db) { bind in
      bind(1, databaseValue(.state))
      bind(2, databaseValue(.lastRunStartedAt))
      bind(3, databaseValue(.blockedOn))
      bind(4, databaseValue(.deferrals))
      bind(5, databaseValue(.updatedAt))
      bind(6, databaseValue(.id))
    }
  }

  private static let upsertSQL: String = {
    let names = Columns.allCases.map(\.rawValue)
    let values = databaseQuestionMarks(count: names.count)
    let updates = names.filter { $0 != Columns.id.rawValue }.map { "\($0) = excluded.\($0)" }
    return "INSERT INTO task (\(names.joined(separator: ", "))) VALUES (\(values)) "
      + "ON CONFLICT(id) DO UPDATE SET \(updates.joined(separator: ", "))"
  }()

  /// Encodes every column by name.
  func encode(to container: inout PersistenceContainer) {
    for column in Columns.allCases { container[column] = databaseValue(column) }
  }

  /// The stored value of `column`.
  private func databaseValue(_ column: Columns) -> DatabaseValue {
    switch column {
    case .id: id.rawValue.databaseValue
    case .kind: kind.rawValue.databaseValue
    case .state: state.rawValue.databaseValue
    case .nextRun: nextRun?.nanosecondsSince1970.databaseValue ?? .null
    case .attempt: attempt.databaseValue
    case .deferrals: deferrals.databaseValue
    case .lastResult: lastResult?.rawValue.databaseValue ?? .null
    case .lastReason: lastReason?.databaseValue ?? .null
    case .lastRunStartedAt: lastRunStartedAt?.nanosecondsSince1970.databaseValue ?? .null
    case .lastRunEndedAt: lastRunEndedAt?.nanosecondsSince1970.databaseValue ?? .null
    case .blockedOn: Self.encode(blockedOn).databaseValue
    case .ephemeral: ephemeral.databaseValue
    case .network: constraints.networkRequired.rawValue.databaseValue
    case .requiresCharging: constraints.requiresCharging.databaseValue
    case .requiresBatteryNotLow: constraints.requiresBatteryNotLow.databaseValue
    case .interval: interval?.nanoseconds.databaseValue ?? .null
    case .flexWindow: flexWindow?.nanoseconds.databaseValue ?? .null
    case .initialDelay: initialDelay.nanoseconds.databaseValue
    case .expedited:
      switch hint {
      case .standard: .null
      case .expedited(let policy): policy.rawValue.databaseValue
      }
    case .budget: budget.nanoseconds.databaseValue
    case .backoffKind: backoff.kind.rawValue.databaseValue
    case .backoffInitial: backoff.initialDelay.nanoseconds.databaseValue
    case .backoffMaxAttempts: backoff.maxAttempts.databaseValue
    case .backoffJitter: backoff.jitter.databaseValue
    case .input: input.databaseValue
    case .scheduledAt: scheduledAt.nanosecondsSince1970.databaseValue
    case .updatedAt: updatedAt.nanosecondsSince1970.databaseValue
    case .windows: Self.encode(constraints.windows).databaseValue
    case .windowEnd: constraints.windowEnd.rawValue.databaseValue
    case .calendar: calendar.map(Self.encode)?.databaseValue ?? .null
    case .lastElapse: lastElapse?.nanosecondsSince1970.databaseValue ?? .null
    case .allowedNetworks: PlacePredicateCoding.text(constraints.allowedNetworks).databaseValue
    case .requiredMount: constraints.requiredMount?.databaseValue ?? .null
    case .requiredReachable: constraints.requiredReachable?.databaseValue ?? .null
    case .inhibit: inhibitPolicy.rawValue.databaseValue
    case .onConditionLost:
      (constraints.onConditionLost.pauseMax == nil ? "stop" : "pause").databaseValue
    case .pauseMax: constraints.onConditionLost.pauseMax?.nanoseconds.databaseValue ?? .null
    case .pausedAt: pausedAt?.nanosecondsSince1970.databaseValue ?? .null
    case .pauseReason: pauseReason?.rawValue.databaseValue ?? .null
    case .relaxation: constraints.relaxation.map(Self.encode)?.databaseValue ?? .null
    case .waitingSince: waitingSince?.nanosecondsSince1970.databaseValue ?? .null
    case .meteredBudget:
      constraints.meteredBudget.map(MeteredBudgetWaitCoding.encode)?.databaseValue ?? .null
    case .requiresIdle: constraints.requiresIdle?.nanoseconds.databaseValue ?? .null
    case .onUserReturn: constraints.onUserReturn.rawValue.databaseValue
    }
  }
}

/// Where each ``TaskRow/Columns`` case stands in the rows of one statement, found by name
/// (case-insensitively, as SQLite matches names) once per statement.
private struct TaskColumnPositions {
  /// By ``TaskRow/Columns/ordinal``.
  private let positions: [Int?]

  init(columnNames: some Sequence<String>) {
    var positions = [Int?](repeating: nil, count: TaskRow.Columns.allCases.count)
    for (position, name) in columnNames.enumerated() {
      if let column = TaskRow.Columns(rawValue: name) ?? Self.caseInsensitive[name.lowercased()],
        positions[column.ordinal] == nil
      {
        positions[column.ordinal] = position
      }
    }
    self.positions = positions
  }

  subscript(column: TaskRow.Columns) -> Int? { positions[column.ordinal] }

  private static let caseInsensitive = Dictionary(
    uniqueKeysWithValues: TaskRow.Columns.allCases.map { ($0.rawValue.lowercased(), $0) })
}

/// Reads the columns of one `task` row by name; every bad value becomes a corrupt-store error
/// naming the task and the column.
private struct ColumnReader {
  let row: Row
  let positions: TaskColumnPositions
  var taskId = "(unknown id)"

  init(row: Row, positions: TaskColumnPositions) {
    self.row = row
    self.positions = positions
  }

  func optional<T: DatabaseValueConvertible>(
    _ column: TaskRow.Columns, _: T.Type = T.self
  ) throws(StoreError) -> T? {
    guard let position = positions[column] else { throw corrupt(column, "is missing") }
    let value: DatabaseValue = row[position]
    if value.isNull { return nil }
    guard let decoded = T.fromDatabaseValue(value) else {
      throw corrupt(column, "holds \(value), which is not a valid \(T.self)")
    }
    return decoded
  }

  func required<T: DatabaseValueConvertible>(
    _ column: TaskRow.Columns, _: T.Type = T.self
  ) throws(StoreError) -> T {
    guard let value = try optional(column, T.self) else { throw corrupt(column, "is NULL") }
    return value
  }

  func optional<T: RawRepresentable>(
    _ column: TaskRow.Columns, _: T.Type
  ) throws(StoreError) -> T? where T.RawValue == String {
    guard let raw = try optional(column, String.self) else { return nil }
    guard let value = T(rawValue: raw) else {
      throw corrupt(column, "holds unknown value \"\(raw)\"")
    }
    return value
  }

  func required<T: RawRepresentable>(
    _ column: TaskRow.Columns, _: T.Type
  ) throws(StoreError) -> T where T.RawValue == String {
    guard let value = try optional(column, T.self) else { throw corrupt(column, "is NULL") }
    return value
  }

  func instant(_ column: TaskRow.Columns) throws(StoreError) -> WallInstant? {
    try optional(column, Int64.self).map(WallInstant.init(nanosecondsSince1970:))
  }

  func duration(_ column: TaskRow.Columns) throws(StoreError) -> Duration? {
    try optional(column, Int64.self).map(Duration.nanoseconds)
  }

  /// The `allowedNetworks` column (as ``PlacePredicateCoding/text(_:)`` writes it).
  func allowList() throws(StoreError) -> NetworkAllowList {
    let text = try required(.allowedNetworks, String.self)
    guard let list = PlacePredicateCoding.allowList(text) else {
      throw corrupt(.allowedNetworks, "holds an unreadable allow-list \"\(text)\"")
    }
    return list
  }

  /// The `onConditionLost` and `pauseMax` columns: `stop`, or `pause` for at most `pauseMax`
  /// (``ConditionLossPolicy/defaultPauseMax`` when NULL).
  func conditionLoss() throws(StoreError) -> ConditionLossPolicy {
    let text = try required(.onConditionLost, String.self)
    switch text {
    case "stop": return .stop
    case "pause":
      return .pause(max: try duration(.pauseMax) ?? ConditionLossPolicy.defaultPauseMax)
    default: throw corrupt(.onConditionLost, "holds unknown value \"\(text)\"")
    }
  }

  /// The `relaxation` column (JSON), or nil.
  func relaxation() throws(StoreError) -> ConstraintRelaxation? {
    guard let text = try optional(.relaxation, String.self) else { return nil }
    guard let relaxation = TaskRow.decodeRelaxation(text) else {
      throw corrupt(.relaxation, "holds an unreadable relaxation \"\(text)\"")
    }
    return relaxation
  }

  /// The `meteredBudget` column (`BYTES|WINDOW`), or nil.
  func meteredBudget() throws(StoreError) -> MeteredBudget? {
    guard let text = try optional(.meteredBudget, String.self) else { return nil }
    guard let budget = MeteredBudgetWaitCoding.decodeBudget(Substring(text)) else {
      throw corrupt(.meteredBudget, "holds an unreadable metered budget \"\(text)\"")
    }
    return budget
  }

  func corrupt(_ column: TaskRow.Columns, _ problem: String) -> StoreError {
    .corrupt(path: "", detail: "task \(taskId): column \(column.rawValue) \(problem)")
  }
}
