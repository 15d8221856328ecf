import Backgrounder
import Foundation
import Locking
import Logging

/// The daemon's metered budgets: the runs' counted bytes (stored, so they survive restarts),
/// the bytes of runs still going (read at most once a second while a budgeted run is on a
/// metered link), and the standings handed to the runtime, which decides who may use a
/// metered link (``Backgrounder/meteredBudgetsChanged(_:)``). When a spent budget frees, the
/// standings are handed again then (one timer, only while a budget is spent).
final class MeteredBudgetLedger: Sendable {
  private struct State {
    var daemonBudget: MeteredBudget?
    var jobBudgets: [TaskId: MeteredBudget] = [:]
    /// Stored runs' metered bytes, at their end.
    var records: [TaskId: [MeteredUsageRecord]] = [:]
    /// Runs in flight: their metered bytes so far.
    var live: [TaskId: Int64] = [:]
    var wake: Task<Void, Never>?
    /// The shared budget's alert level last logged: 0, 80 or 100 (percent).
    var alertLevel = 0

    /// Whether a budget counts the bytes of `id`: the shared one, or its own.
    func counts(_ id: TaskId) -> Bool {
      daemonBudget != nil || jobBudgets[id] != nil
    }
  }

  /// The health problem of a shared budget 80 % or more used.
  static let problemKind = HealthProblem.Kind(rawValue: "meteredBudget")

  /// Where the standings go (the runtime's ``Backgrounder/meteredBudgetsChanged(_:)``).
  private let standingsChanged: @Sendable (MeteredBudgetStandings) -> Void
  /// The stored runs' bytes since an instant (the runtime's store).
  private let storedBytes: @Sendable (WallInstant) async throws -> [RunNetworkRecord]
  private let clock: any WallClock
  private let zone: CalendarTimeZone
  private let logger: Logger
  private let state = Lock(State())

  convenience init(
    runtime: Backgrounder, clock: any WallClock, zone: CalendarTimeZone, logger: Logger
  ) {
    self.init(
      clock: clock, zone: zone, logger: logger,
      standingsChanged: { runtime.meteredBudgetsChanged($0) },
      storedBytes: { try await runtime.networkBytes(after: $0) })
  }

  init(
    clock: any WallClock, zone: CalendarTimeZone, logger: Logger,
    standingsChanged: @escaping @Sendable (MeteredBudgetStandings) -> Void,
    storedBytes: @escaping @Sendable (WallInstant) async throws -> [RunNetworkRecord]
  ) {
    self.standingsChanged = standingsChanged
    self.storedBytes = storedBytes
    self.clock = clock
    self.zone = zone
    self.logger = logger
  }

  /// Takes the budgets of `configuration` (at start and on reload).
  func configure(_ configuration: DaemonConfiguration) {
    state.withLock { state in
      state.daemonBudget = configuration.meteredBudget
      state.jobBudgets = [:]
      for job in configuration.jobs {
        if let budget = job.meteredBudget, let id = try? TaskId(job.id) {
          state.jobBudgets[id] = budget
        }
      }
    }
  }

  /// Reads the stored runs' bytes (once, at start), then hands the standings over.
  func load() async {
    let horizon = clock.now.advanced(by: .seconds(-MeteredBudget.longestTrailingSeconds))
    do {
      let stored = try await storedBytes(horizon)
      state.withLock { state in
        for record in stored where record.bytes.meteredBytes > 0 {
          state.records[record.taskId, default: []].append(
            MeteredUsageRecord(at: record.at, bytes: record.bytes.meteredBytes))
        }
      }
    } catch {
      logger.error("could not read the stored network bytes: \(error)")
    }
    publish()
  }

  /// Whether a run of `id` on a metered link is counted once a second: it has a budget, or
  /// the daemon has one.
  func samplesWhileMetered(_ id: TaskId) -> Bool {
    state.withLock { $0.daemonBudget != nil || $0.jobBudgets[id] != nil }
  }

  /// A run of `id` in flight has used `meteredBytes` on metered links so far.
  func running(_ id: TaskId, meteredBytes: Int64) {
    let changed = state.withLock { state in
      defer { state.live[id] = meteredBytes }
      return state.live[id] != meteredBytes && state.counts(id)
    }
    if changed { publish() }
  }

  /// A run of `id` ended with `record`'s bytes (which the run's worker stores with its outcome:
  /// ``WorkContext/recordNetworkBytes(_:)``): counted, handed over.
  func finished(_ record: RunNetworkRecord) {
    let counts = state.withLock { state in
      state.live[record.taskId] = nil
      if record.bytes.meteredBytes > 0 {
        // What no budget can count any more goes (what ``load()`` would not read), a day's
        // worth at a time: the records are in time order.
        let horizon = record.at.advanced(by: .seconds(-MeteredBudget.longestTrailingSeconds))
        if let first = state.records[record.taskId]?.first,
          first.at < horizon.advanced(by: .seconds(-86_400))
        {
          state.records[record.taskId]?.removeAll { $0.at < horizon }
        }
        state.records[record.taskId, default: []].append(
          MeteredUsageRecord(at: record.at, bytes: record.bytes.meteredBytes))
      }
      return state.counts(record.taskId)
    }
    // No budget counts this job's bytes: the standings are what they were (issue #35: a
    // run's end published them, a step of the runtime, for nothing).
    if counts { publish() }
  }

  /// How many ended runs' metered byte counts are held for `id` (for tests).
  func heldRecords(of id: TaskId) -> Int {
    state.withLock { $0.records[id]?.count ?? 0 }
  }

  /// The standings now, the live runs' bytes counted as of now.
  func standings(at now: WallInstant) -> MeteredBudgetStandings {
    state.withLock { Self.standings(of: $0, at: now, zone: zone) }
  }

  private static func standings(of state: State, at now: WallInstant, zone: CalendarTimeZone)
    -> MeteredBudgetStandings
  {
    func usage(_ id: TaskId) -> [MeteredUsageRecord] {
      (state.records[id] ?? [])
        + (state.live[id].map { [MeteredUsageRecord(at: now, bytes: $0)] } ?? [])
    }
    var standings = MeteredBudgetStandings()
    for (id, budget) in state.jobBudgets {
      standings.tasks[id] = budget.standing(of: usage(id), at: now, zone: zone)
    }
    if let shared = state.daemonBudget {
      let all = Set(state.records.keys).union(state.live.keys).flatMap(usage)
      standings.daemon = shared.standing(of: all, at: now, zone: zone)
    }
    return standings
  }

  /// The shared budget's standing now, as `status` shows it; nil without one.
  func daemonReport() -> MeteredBudgetReport? {
    let now = clock.now
    guard let shared = standings(at: now).daemon else { return nil }
    return MeteredBudgetReport(shared, resetsAt: shared.budget.window(at: now, zone: zone).end)
  }

  /// The shared budget 80 % or more used, as a health problem.
  func problems() -> [HealthProblem] {
    guard let shared = standings(at: clock.now).daemon, shared.percentUsed >= 80 else {
      return []
    }
    return [HealthProblem(kind: Self.problemKind, detectedAt: nil, message: Self.summary(shared))]
  }

  /// `metered budget 2 GB/30d: 1.7 GB used (85 %), 300 MB left`.
  static func summary(_ standing: MeteredBudgetStanding) -> String {
    "metered budget \(standing.budget): \(MeteredBudget.byteText(standing.used)) used "
      + "(\(standing.percentUsed) %), \(MeteredBudget.byteText(standing.left)) left"
      + (standing.isSpent ? "; jobs needing the network wait for an unmetered link" : "")
  }

  /// Hands the standings to the runtime, logs the shared budget crossing 80 % and 100 %, and
  /// arms a timer for the soonest release of a spent budget.
  private func publish() {
    let now = clock.now
    let (standings, alert) = state.withLock { state in
      let standings = Self.standings(of: state, at: now, zone: zone)
      var alert: MeteredBudgetStanding?
      if let shared = standings.daemon {
        let level = shared.percentUsed >= 100 ? 100 : shared.percentUsed >= 80 ? 80 : 0
        if level > state.alertLevel { alert = shared }
        state.alertLevel = level
      }
      return (standings, alert)
    }
    standingsChanged(standings)
    if let alert { logger.warning("\(Self.summary(alert))") }
    let spent = ([standings.daemon].compactMap { $0 } + Array(standings.tasks.values))
      .filter(\.isSpent)
    let soonest = spent.compactMap(\.freesAt).min()
    let clock = self.clock
    let wake: Task<Void, Never>? = soonest.map { instant in
      Task { [weak self] in
        do {
          try await clock.sleep(until: instant, tolerance: .seconds(1))
        } catch {
          return
        }
        self?.publish()
      }
    }
    state.withLock { state in
      state.wake?.cancel()
      state.wake = wake
    }
  }

  /// Hands the standings over again (after ``configure(_:)`` on a reload).
  func republish() { publish() }

  /// Stops the release timer.
  func stop() {
    state.withLock { state in
      state.wake?.cancel()
      state.wake = nil
    }
  }
}
