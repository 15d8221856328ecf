import GRDB

/// The store's schema: GRDB migrations plus an SQLite `application_id` that marks the file as
/// a Backgrounder store.
enum Schema {
  /// `PRAGMA application_id` of every Backgrounder store ("BGND").
  static let applicationId: Int32 = 0x4247_4E44

  /// Migrations run in the order they are registered here, each once per store, known by its
  /// identifier. New ones get a name that says what they do (`run-stop-signal`); the older ones
  /// keep the issue-numbered identifiers they shipped with (`i26-calendar`, `i29-…`), because
  /// GRDB records applied migrations by identifier and a renamed one would run again on every
  /// existing store. For the same reason the shipped ones stay in the order they were registered
  /// (the `i2x-…` ones interleaved as they landed), and a new one is registered last.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1-tasks-and-runs") { db in
      try db.execute(sql: "PRAGMA application_id = \(applicationId)")
      try db.execute(
        sql: """
          CREATE TABLE task (
            id TEXT PRIMARY KEY NOT NULL,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            nextRun INTEGER,
            attempt INTEGER NOT NULL,
            deferrals INTEGER NOT NULL,
            lastResult TEXT,
            lastReason TEXT,
            lastRunStartedAt INTEGER,
            lastRunEndedAt INTEGER,
            blockedOn TEXT NOT NULL,
            ephemeral INTEGER NOT NULL,
            network TEXT NOT NULL,
            requiresCharging INTEGER NOT NULL,
            requiresBatteryNotLow INTEGER NOT NULL,
            interval INTEGER,
            flexWindow INTEGER,
            initialDelay INTEGER,
            expedited TEXT,
            budget INTEGER NOT NULL,
            backoffKind TEXT NOT NULL,
            backoffInitial INTEGER NOT NULL,
            backoffMaxAttempts INTEGER NOT NULL,
            backoffJitter REAL NOT NULL,
            input BLOB NOT NULL,
            scheduledAt INTEGER NOT NULL,
            updatedAt INTEGER NOT NULL
          );
          CREATE INDEX task_state ON task(state);
          CREATE TABLE run (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            taskId TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            startedAt INTEGER,
            endedAt INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT
          );
          CREATE INDEX run_task ON run(taskId, id);
          """)
    }
    migrator.registerMigration("i26-calendar") { db in
      // Time windows (any task), and the calendar of calendar-scheduled periodic tasks with
      // the elapse each last ran for.
      try db.execute(
        sql: """
          ALTER TABLE task ADD COLUMN windows TEXT NOT NULL DEFAULT '';
          ALTER TABLE task ADD COLUMN windowEnd TEXT NOT NULL DEFAULT 'continue';
          ALTER TABLE task ADD COLUMN calendar TEXT;
          ALTER TABLE task ADD COLUMN lastElapse INTEGER;
          """)
    }
    migrator.registerMigration("v2-allowed-networks-and-mounts") { db in
      try db.execute(
        sql: """
          ALTER TABLE task ADD COLUMN allowedNetworks TEXT NOT NULL DEFAULT '';
          ALTER TABLE task ADD COLUMN requiredMount TEXT;
          """)
    }
    migrator.registerMigration("i29-staleness") { db in
      try TaskSuccess.createTable(db)
    }
    migrator.registerMigration("i29-run-detail") { db in
      try db.execute(
        sql: """
          ALTER TABLE run ADD COLUMN conditions TEXT;
          ALTER TABLE run ADD COLUMN outputTail TEXT;
          """)
    }
    migrator.registerMigration("i28-reachable") { db in
      try db.execute(sql: "ALTER TABLE task ADD COLUMN requiredReachable TEXT")
    }
    migrator.registerMigration("i29-telemetry-outbox") { db in
      try TelemetryOutbox.createTables(db)
    }
    migrator.registerMigration("i29-stale-episodes") { db in
      try StaleEpisodes.createTable(db)
    }
    migrator.registerMigration("i27-inhibit") { db in
      // The request's inhibit policy; tasks stored before it take the default.
      try db.execute(sql: "ALTER TABLE task ADD COLUMN inhibit TEXT NOT NULL DEFAULT 'delay'")
    }
    migrator.registerMigration("run-stop-signal") { db in
      // How a stopped run ended (its worker's words); runs recorded before it have none.
      try db.execute(sql: "ALTER TABLE run ADD COLUMN stop TEXT")
    }
    migrator.registerMigration("metered-usage-run-network-bytes") { db in
      // Each run's counted bytes (history, metered budgets); runs before it have none.
      try MeteredUsageStore.createTable(db)
    }
    migrator.registerMigration("task-pause-on-condition-lost") { db in
      // `on-condition-lost` ("stop" or "pause") and `pause-max` of the request, and the pause
      // of the run in flight (when and why it was frozen); tasks stored before it stop.
      try db.execute(
        sql: """
          ALTER TABLE task ADD COLUMN onConditionLost TEXT NOT NULL DEFAULT 'stop';
          ALTER TABLE task ADD COLUMN pauseMax INTEGER;
          ALTER TABLE task ADD COLUMN pausedAt INTEGER;
          ALTER TABLE task ADD COLUMN pauseReason TEXT;
          """)
    }
    migrator.registerMigration("relax-after") { db in
      // A request's constraint relaxation (JSON) and when its wait for conditions began; tasks
      // stored before it have neither.
      try db.execute(
        sql: """
          ALTER TABLE task ADD COLUMN relaxation TEXT;
          ALTER TABLE task ADD COLUMN waitingSince INTEGER;
          """)
    }
    migrator.registerMigration("task-metered-budget") { db in
      // A request's `WorkConstraints.meteredBudget` (`BYTES|WINDOW`); tasks stored before it
      // have none, and so do not use metered links until scheduled again.
      try db.execute(sql: "ALTER TABLE task ADD COLUMN meteredBudget TEXT")
    }
    migrator.registerMigration("requires-idle") { db in
      // `requires-idle` (nanoseconds, NULL: none) and `on-user-return` of the request; tasks
      // stored before it need no idle user.
      try db.execute(
        sql: """
          ALTER TABLE task ADD COLUMN requiresIdle INTEGER;
          ALTER TABLE task ADD COLUMN onUserReturn TEXT NOT NULL DEFAULT 'continue';
          """)
    }
    migrator.registerMigration("calendar-as-lines") { db in
      // The `calendar` column as lines of `key value` instead of JSON, which took 11 % of a
      // restart's CPU with 10,000 calendar jobs (`TaskRow.encode(_:)`).
      try TaskRow.convertCalendarsToLines(db)
    }
    migrator.registerMigration("fewer-pages-per-run") { db in
      try removeRunWriteOverhead(db)
    }
    return migrator
  }

  /// Migration `fewer-pages-per-run`: each page a commit changes is a WAL frame written and synced,
  /// and a run's commit changed pages no query needs (issue #35; the daemon's `pwrite`s per run
  /// went from 28 to 20, `RunPagesMigrationTests` counts 10 frames before and 7 after). Drops the
  /// index on `task.state`, which every state change moved (only the start-up sweep filters on
  /// state, once; it scans the table), and rebuilds `run` and `run_network_bytes` without
  /// `AUTOINCREMENT`, whose `sqlite_sequence` row every insert updated: a plain `INTEGER PRIMARY
  /// KEY` is still larger than every id present, which is all that orders a task's history (nothing
  /// keeps a run's id). Ids and rows are kept; `run`'s index and trigger are made again as they
  /// were. The telemetry outbox keeps its `AUTOINCREMENT`: a delivered batch removes rows up to its
  /// last id, which must never be handed out again.
  static func removeRunWriteOverhead(_ db: Database) throws {
    try db.execute(
      sql: """
        DROP INDEX IF EXISTS task_state;
        CREATE TABLE run_rebuilt (
          id INTEGER PRIMARY KEY,
          taskId TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          startedAt INTEGER,
          endedAt INTEGER NOT NULL,
          outcome TEXT NOT NULL,
          reason TEXT,
          conditions TEXT,
          outputTail TEXT,
          stop TEXT
        );
        INSERT INTO run_rebuilt (id, taskId, attempt, startedAt, endedAt, outcome, reason,
          conditions, outputTail, stop)
          SELECT id, taskId, attempt, startedAt, endedAt, outcome, reason, conditions,
            outputTail, stop FROM run;
        DROP TABLE run;
        ALTER TABLE run_rebuilt RENAME TO run;
        CREATE INDEX run_task ON run(taskId, id);
        \(TaskSuccess.runSuccessTrigger)
        """)
    try MeteredUsageStore.createTable(db, named: "run_network_bytes_rebuilt", indexed: false)
    try db.execute(
      sql: """
        INSERT INTO run_network_bytes_rebuilt SELECT id, taskId, attempt, startedAt, at, sent,
          received, meteredSent, meteredReceived, accounting FROM run_network_bytes;
        DROP TABLE run_network_bytes;
        ALTER TABLE run_network_bytes_rebuilt RENAME TO run_network_bytes;
        """)
    try MeteredUsageStore.createIndexes(db)
    try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name IN ('run', 'run_network_bytes')")
  }

  /// Checks that `db` is a Backgrounder store this version understands (or an empty file).
  static func check(_ db: Database, path: String) throws {
    let appId = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
    if appId != 0 && appId != applicationId {
      throw StoreError.notABackgrounderStore(
        path: path, detail: "application_id is \(appId), expected \(applicationId)")
    }
    if appId == 0 {
      // GRDB creates an empty `grdb_migrations` outside the first migration's transaction: a
      // store caught between the two (being created right now, or its creator killed at that
      // moment) is still an uninitialized Backgrounder store, not a foreign file.
      var tables = try String.fetchAll(
        db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      if tables == ["grdb_migrations"],
        try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") == 0
      {
        tables = []
      }
      if !tables.isEmpty {
        throw StoreError.notABackgrounderStore(
          path: path, detail: "it holds tables \(tables.joined(separator: ", "))")
      }
      return
    }
    let migrator = Self.migrator
    if try migrator.hasBeenSuperseded(db) {
      let known = Set(migrator.migrations)
      let unknown = try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
      throw StoreError.newerSchema(path: path, unknownMigrations: unknown)
    }
  }

  /// Maps an error from opening or reading `path` to a ``StoreError``.
  static func storeError(_ error: any Error, path: String) -> StoreError {
    if let error = error as? StoreError {
      return error.code == .corrupt ? error.at(path) : error
    }
    if let error = error as? DatabaseError {
      switch error.resultCode {
      case .SQLITE_NOTADB, .SQLITE_CORRUPT:
        return .corrupt(path: path, detail: error.message ?? "\(error.resultCode)")
      case .SQLITE_CANTOPEN:
        return .openFailed(path: path, detail: error.message ?? "cannot open")
      default:
        return .openFailed(path: path, detail: "\(error)")
      }
    }
    return .openFailed(path: path, detail: "\(error)")
  }
}
