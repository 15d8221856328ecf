import Foundation
import GRDB

/// One task as `backgrounder status` shows it, read from the store.
///
/// Encodes with the keys `id, kind, state, nextRun, attempt, deferrals, lastResult,
/// lastReason, pendingPredicates`, plus `ephemeral, lastRunStartedAt, lastRunEndedAt,
/// recentRuns`; times are ISO 8601 strings, absent values are `null`. `inhibitor` only while
/// the task's run holds a sleep inhibitor lock.
public struct TaskStatus: Hashable, Sendable, Encodable {
  /// The task id.
  public var id: TaskId
  /// One-time or periodic.
  public var kind: TaskKind
  /// pending, running, backoff, blocked, succeeded or failed.
  public var state: TaskState
  /// When it is due next (`nil` when finished or running a one-time task).
  public var nextRun: Date?
  /// The attempt within the current cycle (0-based).
  public var attempt: Int
  /// Consecutive network-gate deferrals.
  public var deferrals: Int
  /// success, failure, retry, or `nil` before the first outcome.
  public var lastResult: LastResult?
  /// Why the last result happened.
  public var lastReason: String?
  /// What it waits for.
  public var pendingPredicates: [PendingPredicate]
  /// Ephemeral work does not survive a restart.
  public var ephemeral: Bool
  /// When the last run started.
  public var lastRunStartedAt: Date?
  /// When the last run ended.
  public var lastRunEndedAt: Date?
  /// The most recent runs, newest first.
  public var recentRuns: [RunRecord]
  /// The request's inhibit policy (not part of the JSON document).
  public var inhibitPolicy: InhibitPolicy = .delay
  /// The request's input (not part of the JSON document), decoded when read.
  public var input: WorkInput {
    get { (try? WorkInput.deserialize(serializedInput)) ?? WorkInput() }
    set { serializedInput = (try? newValue.serialized()) ?? Data() }
  }
  /// The input as the store keeps it: `status` lists every task and never decodes it.
  var serializedInput: Data

  /// Whether the stored input is `input`, compared in its serialized form (keys sorted, so
  /// equal inputs serialize to the same bytes) without decoding the stored one.
  public func hasInput(_ input: WorkInput) -> Bool {
    (try? input.serialized()) == serializedInput
  }

  /// Whether the stored input holds `value` at `key`. Without decoding it when `key` sorts
  /// before the input's other keys (its serialized form then starts with it, after the
  /// wrapper): a caller that keeps a digest of what it stored under such a key compares it for
  /// the cost of a prefix. Otherwise (the key absent or not first, or one that JSON escapes)
  /// the stored input is decoded.
  public func hasInput(_ key: String, _ value: WorkValue) -> Bool {
    if let (alone, keyEnd) = WorkInput.serialized(key: key, value: value) {
      // `{"values":{"key":value}}`: the stored input starts with `{"values":{"key":value`,
      // then `,` or `}`, when it holds the value with the key first.
      let head = alone.dropLast(2)
      let answer: Bool? = serializedInput.withUnsafeBytes { stored in
        if stored.count > head.count, stored.starts(with: head) {
          let next = stored[head.count]
          if next == UInt8(ascii: ",") || next == UInt8(ascii: "}") { return true }
        }
        // The key first, with another value.
        return stored.starts(with: alone[..<keyEnd]) ? false : nil
      }
      if let answer { return answer }
    }
    return (try? WorkInput.deserialize(serializedInput))?[key] == value
  }

  /// Set by a reader that knows no process runs this store's work: a task left `running`
  /// then encodes its state as `interrupted` (its run ended with the process that ran it).
  public var interrupted = false
  /// The mode of the sleep inhibitor lock the task's run holds now (`"inhibitor"` in JSON, only
  /// while one is held): the store does not know it, the daemon's `status` fills it in.
  public var inhibitor: InhibitPolicy? = nil
  /// When its run was paused (`on-condition-lost = "pause"`), while it is (`"pausedSince"` in
  /// JSON, only then).
  public var pausedSince: Date? = nil
  /// The lost condition its run is paused for (`"pauseReason"` in JSON: `networkMetered`, …).
  public var pauseReason: StopReason? = nil
  /// When its conditions relax (``ConstraintRelaxation``; `"relaxesAt"` in JSON, only for a
  /// task waiting under a relaxation): in the past once they have.
  public var relaxesAt: Date? = nil

  /// Whether its run is paused now (not when the process that ran it is gone).
  public var isPaused: Bool { !interrupted && state == .running && pausedSince != nil }

  /// The state as shown: `interrupted` for a run whose process is gone, `paused` for a run
  /// frozen until its conditions hold again, else ``state``.
  public var displayedState: String {
    interrupted ? "interrupted" : isPaused ? "paused" : state.rawValue
  }

  private enum CodingKeys: String, CodingKey {
    case id, kind, state, nextRun, attempt, deferrals, lastResult, lastReason, pendingPredicates
    case ephemeral, lastRunStartedAt, lastRunEndedAt, recentRuns, inhibitor
    case pausedSince, pauseReason, relaxesAt
  }

  /// Encodes with ISO 8601 times and explicit `null`s.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(kind, forKey: .kind)
    try container.encode(displayedState, forKey: .state)
    try container.encode(nextRun.map(ISO8601.string), forKey: .nextRun)
    try container.encode(attempt, forKey: .attempt)
    try container.encode(deferrals, forKey: .deferrals)
    try container.encode(lastResult, forKey: .lastResult)
    try container.encode(lastReason, forKey: .lastReason)
    try container.encode(pendingPredicates, forKey: .pendingPredicates)
    try container.encode(ephemeral, forKey: .ephemeral)
    try container.encode(lastRunStartedAt.map(ISO8601.string), forKey: .lastRunStartedAt)
    try container.encode(lastRunEndedAt.map(ISO8601.string), forKey: .lastRunEndedAt)
    try container.encode(recentRuns, forKey: .recentRuns)
    try container.encodeIfPresent(inhibitor, forKey: .inhibitor)
    if isPaused {
      try container.encode(pausedSince.map(ISO8601.string), forKey: .pausedSince)
      try container.encode(pauseReason, forKey: .pauseReason)
    }
    try container.encodeIfPresent(relaxesAt.map(ISO8601.string), forKey: .relaxesAt)
  }
}

/// Reads a store **read-only**, safely while another process (the daemon) writes it (WAL).
/// It never creates, migrates or modifies the file. A store that its creator has not
/// initialized yet (the daemon is starting) reads as holding no tasks.
public struct TaskStoreReader: Sendable {
  /// The store file.
  public let path: String
  private let queue: DatabaseQueue
  /// False while the file has no Backgrounder schema yet.
  private let hasSchema: Bool

  /// Opens the store at `path` read-only.
  /// - Throws: ``StoreError`` (`notFound`, `corrupt`, `newerSchema`, `notABackgrounderStore`,
  ///   `openFailed`, also for a path that is not a regular file).
  public init(path: String) throws {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else {
      throw StoreError.notFound(path: path)
    }
    // A FIFO (or a directory, a device) is refused here, not waited on in SQLite's open.
    try PrivateStoreFile.checkRegular(path)
    var configuration = Configuration()
    configuration.readonly = true
    configuration.busyMode = .timeout(5)
    configuration.label = "backgrounder-store-reader"
    // Pages read in place from the operating system's cache rather than copied into SQLite's
    // own, one system call each (the daemon never shrinks the file, so no mapped page goes).
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA mmap_size = \(Self.mappedBytes)")
    }
    do {
      queue = try DatabaseQueue(path: path, configuration: configuration)
      hasSchema = try queue.read { db in
        try Schema.check(db, path: path)
        return try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0 != 0
      }
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// The most of the file read through a memory mapping.
  private static let mappedBytes = 256 << 20

  /// Every task in the store (active and recently finished), sorted by id, with up to
  /// `historyLimit` recent runs each. Time predicates are evaluated against `now`. Without
  /// `includingInput`, each task's ``TaskStatus/input`` is empty (`status` shows none).
  public func tasks(now: Date = Date(), historyLimit: Int = 5, includingInput: Bool = true)
    throws -> [TaskStatus]
  {
    guard hasSchema else { return [] }
    do {
      return try queue.read { db in
        try TaskStatusQuery.all(
          db, now: now, historyLimit: historyLimit, includingInput: includingInput)
      }
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// One task, or `nil` if the store has no task with this id.
  public func task(_ id: TaskId, now: Date = Date(), historyLimit: Int = 20) throws -> TaskStatus? {
    guard hasSchema else { return nil }
    do {
      return try queue.read { db in
        guard let row = try TaskRow.fetchOne(db, key: id.rawValue) else { return nil }
        return Self.status(row, now: now, history: try Self.history(db, id, historyLimit))
      }
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  /// `body`'s answer read from the store (nil while it has no schema yet), errors as
  /// ``StoreError``.
  func read<T>(_ body: (Database) throws -> T) throws -> T? {
    guard hasSchema else { return nil }
    do {
      return try queue.read(body)
    } catch {
      throw Schema.storeError(error, path: path)
    }
  }

  private static func history(_ db: Database, _ id: TaskId, _ limit: Int) throws -> [RunRecord] {
    guard limit > 0 else { return [] }
    // Prepared once per connection: `status` asks this once per task.
    let statement = try db.cachedStatement(
      sql: """
        SELECT attempt, startedAt, endedAt, outcome, reason, conditions, outputTail, stop FROM run
        WHERE taskId = ? ORDER BY id DESC LIMIT ?
        """)
    let counted = try db.tableExists("run_network_bytes")
    return try Row.fetchAll(statement, arguments: [id.rawValue, limit]).map { row in
      let startedAt = (row[1] as Int64?).map { WallInstant(nanosecondsSince1970: $0) }
      let endedAt = WallInstant(nanosecondsSince1970: row[2])
      var record = RunRecord(
        attempt: row[0], startedAt: startedAt?.date, endedAt: endedAt.date, outcome: row[3],
        reason: row[4], conditions: row[5], outputTail: row[6], stop: row[7])
      if counted, let startedAt {
        record.network = try MeteredUsageStore.bytes(
          db, of: id, attempt: record.attempt, startedAt: startedAt, endedAt: endedAt)
      }
      return record
    }
  }

  private static func status(_ row: TaskRow, now: Date, history: [RunRecord]) -> TaskStatus {
    let predicates = TaskStatus.pendingPredicates(
      blockedOn: row.blockedOn, state: row.state, nextRun: row.nextRun?.date, now: now,
      windows: row.constraints.windows, zone: CalendarTimeZones.local())
    var status = TaskStatus(
      id: row.id, kind: row.kind, state: row.state,
      nextRun: row.state.isFinished
        ? nil : TaskStatus.windowOpening(in: predicates) ?? row.nextRun?.date,
      attempt: row.attempt,
      deferrals: row.deferrals, lastResult: row.lastResult, lastReason: row.lastReason,
      pendingPredicates: predicates, ephemeral: row.ephemeral,
      lastRunStartedAt: row.lastRunStartedAt?.date, lastRunEndedAt: row.lastRunEndedAt?.date,
      recentRuns: history, inhibitPolicy: row.inhibitPolicy, serializedInput: row.input,
      relaxesAt: TaskStatus.relaxDate(
        waitingSince: row.waitingSince, relaxation: row.constraints.relaxation,
        state: row.state))
    status.pausedSince = row.pausedAt?.date
    status.pauseReason = row.pauseReason
    return status
  }
}
