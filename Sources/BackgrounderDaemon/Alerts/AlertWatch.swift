import Backgrounder
import Foundation
import Locking
import Logging

/// Watches the jobs with alert settings: looks at the store when a run ends or a job is
/// (re)scheduled, and once more at the earliest staleness deadline — one timer, armed only
/// while a watched job is not stale yet, so an idle daemon wakes for nothing else. Each look
/// feeds an ``AlertTracker``; its answer becomes the `jobStale` health problems, the staleness
/// metrics, the systemd `STATUS=` line and the hooks to run — bounded by a ``HookSchedule``
/// (one running and one waiting hook per job, a few jobs' hooks at once, stopped at shutdown).
final class AlertWatch: Sendable {
  /// What one look reads: each stored task's creation and last success, and its status; of
  /// every task (nil), or of the given ones only (those of them still stored).
  typealias Read =
    @Sendable (_ only: Set<TaskId>?) async throws -> (
      successes: [TaskSuccess], tasks: [TaskStatus]
    )

  /// A look reads every task, not only the changed ones, when more than this many changed.
  static let partialReadLimit = 64

  /// Where the stale episodes already reported are kept, so that a restart does not report
  /// them again (the store's `stale_episode` table).
  struct EpisodeStore: Sendable {
    /// The episodes recorded before.
    var load: @Sendable () async throws -> [TaskId: Date]
    /// Records the episodes going on now, in place of the ones before.
    var save: @Sendable ([TaskId: Date]) async throws -> Void
  }

  private struct State {
    var alerts: [TaskId: JobAlerts] = [:]
    var tracker = AlertTracker()
    var problems: [HealthProblem] = []
    var sleeper: Task<Void, Never>?
    /// Whether the tracker took the recorded episodes yet (at the first look).
    var resumed = false
    /// What the last looks read, by task: the next look reads again only the tasks an event
    /// named since (``noteChange(_:)``), not the whole store after every run (issue #35: with
    /// 1,000 jobs with alerts that read tripled the daemon's CPU per run).
    var known: (successes: [TaskId: TaskSuccess], tasks: [TaskId: TaskStatus])?
    /// The tasks named by events since the last look.
    var changed: Set<TaskId> = []
    /// The next look reads every task (at the first look, after a reload, after an event that
    /// names no task, after a failed read).
    var readAll = true
  }

  private let clock: any WallClock
  private let read: Read
  private let episodes: EpisodeStore?
  private let hooks: AlertHooks?
  /// Desktop notices of failures and stale episodes (`[notify] desktop`), when on: every job
  /// of the config is then watched for failures, with or without alert settings.
  private let notices: DesktopNotices?
  private let metrics: MetricsFile?
  /// Receives the `STATUS=` line when the set of stale jobs changes.
  private let notify: @Sendable (String) -> Void
  private let logger: Logger
  private let state = Lock(State())
  private let wake: AsyncStream<Void>.Continuation
  private let wakes: AsyncStream<Void>
  /// The hooks' decisions, and the task of each running hook (by job).
  private let hookState: Lock<HookState>

  private struct HookState {
    var schedule: HookSchedule
    var tasks: [TaskId: Task<Void, Never>] = [:]
  }

  init(
    clock: any WallClock, read: @escaping Read, episodes: EpisodeStore? = nil,
    hooks: AlertHooks?, hookLimits: HookSchedule.Limits = .init(), metrics: MetricsFile?,
    notices: DesktopNotices? = nil, logger: Logger,
    notify: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.clock = clock
    self.read = read
    self.episodes = episodes
    self.hooks = hooks
    self.notices = notices
    self.metrics = metrics
    self.logger = logger
    self.notify = notify
    (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    hookState = Lock(HookState(schedule: HookSchedule(limits: hookLimits)))
  }

  /// Takes the config's alert settings (at start and on every reload) and looks again.
  func configure(_ configuration: DaemonConfiguration) {
    var alerts: [TaskId: JobAlerts] = [:]
    for job in configuration.jobs {
      guard let id = try? TaskId(job.id) else { continue }
      let settings = (configuration.alerts[job.id] ?? JobAlerts())
        .merged(withDefaults: configuration.alertDefaults)
      if !settings.isEmpty || notices != nil { alerts[id] = settings }
    }
    state.withLock { state in
      state.alerts = alerts
      state.readAll = true
    }
    wake.yield()
  }

  /// An event that may change alerts named task `id` (nil: none): the next look reads it again.
  func noteChange(_ id: TaskId?) {
    state.withLock { state in
      if let id { state.changed.insert(id) } else { state.readAll = true }
    }
  }

  /// The stale jobs, as health problems.
  func problems() -> [HealthProblem] { state.withLock { $0.problems } }

  /// Whether the events that may change alerts need to reach the watch: some job has alerts
  /// (or notices). While not, its subscription drops them where they are emitted, so a run's
  /// end wakes no task of it and reads no store (issue #35); ``configure(_:)`` looks again
  /// when that changes. The metrics need no look after the first: ``EventReporter`` keeps the
  /// last successes current.
  var isWatching: Bool { state.withLock { !$0.alerts.isEmpty } }

  /// Looks at the store whenever `events` says a run ended or a job changed, and at the
  /// staleness deadlines, until `events` ends; runs the hooks meanwhile (see ``HookSchedule``).
  /// At its end the hooks are stopped (``stopHooks()``) and waited for.
  func run(events: some AsyncSequence<MonitorEvent, Never> & Sendable) async {
    defer { state.withLock { $0.sleeper?.cancel() } }
    await withDiscardingTaskGroup { group in
      group.addTask {
        for await event in events where Self.mayChangeAlerts(event.kind) {
          self.noteChange(event.taskId)
          self.wake.yield()
        }
        self.wake.finish()
        self.notices?.finish()
      }
      group.addTask { await self.notices?.run() }
      for await _ in wakes { await look() }
    }
    stopHooks()
    await waitForHooks()
  }

  /// The daemon stops: waiting hooks are cancelled and running ones stopped (SIGTERM to their
  /// process groups, SIGKILL after the runner's grace period); no hook starts afterwards.
  func stopHooks() {
    let stopped = hookState.withLock { state -> (HookSchedule.Stop, [Task<Void, Never>])? in
      state.schedule.isStopping ? nil : (state.schedule.stop(), Array(state.tasks.values))
    }
    guard let (stop, tasks) = stopped else { return }
    for task in tasks { task.cancel() }
    if stop.cancelled > 0 || !stop.running.isEmpty {
      logger.notice(
        "stopping: hooks cancelled",
        metadata: [
          "pending": "\(stop.cancelled)",
          "running": "\(stop.running.map(\.rawValue).joined(separator: ","))",
        ])
    }
  }

  /// Returns once no hook runs.
  private func waitForHooks() async {
    while let task = hookState.withLock({ $0.tasks.values.first }) { await task.value }
  }

  /// Hands `call` to the schedule and starts what it says.
  private func submit(_ call: AlertHooks.Call) {
    guard let hooks else { return }
    let metadata: Logger.Metadata = ["job": "\(call.job)", "hook": "on-\(call.result)"]
    let now = clock.now
    let submission = hookState.withLock { state in
      let submission = state.schedule.submit(call, now: now)
      if case .start(let start) = submission { launch(start, hooks: hooks, in: &state) }
      return submission
    }
    switch submission {
    case .start, .queued: break
    case .coalesced(let count):
      logger.notice(
        "hook still waiting for the previous one of this job; events coalesced",
        metadata: metadata.merging(["coalesced": "\(count)"]) { $1 })
    case .dropped:
      logger.warning("too many hooks waiting; this one is dropped", metadata: metadata)
    case .stopping:
      logger.notice("stopping: hook not run", metadata: metadata)
    }
  }

  /// Starts the hook of `start` in a task of its own (the lock is held: the task ends after it
  /// is recorded); at its end the schedule says which hooks start next.
  private func launch(_ start: HookSchedule.Start, hooks: AlertHooks, in state: inout HookState) {
    let job = start.call.job
    state.tasks[job] = Task { [clock] in
      await hooks.run(start.call, until: start.deadline, on: clock)
      let now = clock.now
      hookState.withLock { state in
        state.tasks[job] = nil
        for next in state.schedule.finished(job, now: now) {
          launch(next, hooks: hooks, in: &state)
        }
      }
    }
  }

  /// Reads the store and acts on what changed.
  func look() async {
    let idle = state.withLock { state in
      guard state.alerts.isEmpty, metrics == nil else { return false }
      state.problems = []
      state.sleeper?.cancel()
      state.sleeper = nil
      return true
    }
    // Nothing to watch and no metrics to publish: the store is not read.
    if idle { return }
    let read: (successes: [TaskSuccess], tasks: [TaskId: TaskStatus])
    do {
      read = try await readChanges()
    } catch {
      state.withLock { $0.readAll = true }
      logger.warning("cannot read the store for staleness alerts", metadata: ["error": "\(error)"])
      return
    }
    let recorded = await recordedEpisodes()
    let now = clock.now.date
    let tasks = read.tasks
    let (update, alerts, changed, going) = state.withLock { state in
      if let recorded { state.tracker = AlertTracker(episodes: recorded) }
      let jobs = read.successes.compactMap { success -> AlertTracker.Job? in
        guard let alerts = state.alerts[success.id] else { return nil }
        let task = tasks[success.id]
        return AlertTracker.Job(
          id: success.id, createdAt: success.createdAt, lastSuccessAt: success.lastSuccessAt,
          alertAfter: alerts.alertAfter,
          finishedForGood: success.state == .succeeded && task?.kind == .oneTime,
          lastFailureAt: task?.lastResult == .failure ? task?.lastRunEndedAt : nil)
      }
      let update = state.tracker.update(jobs, now: now)
      let problems = update.stale.map { stale in
        HealthProblem(
          kind: .jobStale, taskId: stale.id, detectedAt: stale.staleness.deadline,
          message: StalenessMessage.text(
            since: stale.staleness.since, now: now, activity: tasks[stale.id].map(Self.activity)))
      }
      let changed = problems.map(\.taskId) != state.problems.map(\.taskId)
      state.problems = problems
      state.sleeper?.cancel()
      state.sleeper = update.nextDeadline.map { deadline in
        Task { [clock, wake] in
          do {
            try await clock.sleep(until: WallInstant(deadline), tolerance: nil)
            wake.yield()
          } catch {}
        }
      }
      return (update, state.alerts, changed, state.tracker.episodes)
    }
    if let episodes, !update.began.isEmpty || !update.ended.isEmpty {
      do {
        try await episodes.save(going)
      } catch {
        logger.warning(
          "cannot record the stale episodes; a restart reports them again",
          metadata: ["error": "\(error)"])
      }
    }
    report(update, alerts: alerts, successes: read.successes, tasks: tasks, changed: changed)
  }

  /// What the store holds now, by task: what the last looks read, with the tasks named by
  /// events since read again (or every task, when ``State/readAll`` or more than
  /// ``partialReadLimit`` changed). A timer's look reads nothing: the store did not change.
  private func readChanges() async throws -> (
    successes: [TaskSuccess], tasks: [TaskId: TaskStatus]
  ) {
    // The kept reads are moved out (and put back below): changed in place, not copied.
    var (only, taken, watched) = state.withLock { state in
      defer {
        state.changed = []
        state.readAll = false
      }
      let partial =
        !state.readAll && state.changed.count <= Self.partialReadLimit && state.known != nil
      let taken = partial ? state.known : nil
      if partial { state.known = nil }
      return (partial ? state.changed : nil, taken, Set(state.alerts.keys))
    }
    if let only, var known = taken {
      taken = nil
      if !only.isEmpty {
        let fresh = try await read(only)
        for id in only {
          known.successes[id] = nil
          known.tasks[id] = nil
        }
        for success in fresh.successes where watched.contains(success.id) {
          known.successes[success.id] = success
        }
        for task in fresh.tasks where watched.contains(task.id) { known.tasks[task.id] = task }
      }
      state.withLock { $0.known = known }
      return (Array(known.successes.values), known.tasks)
    }
    // Every task: this look hands on all the successes (the metrics' last success of every
    // job); only the watched jobs' are kept (the tracker and the hooks look at no other).
    let fresh = try await read(nil)
    var known = (successes: [TaskId: TaskSuccess](), tasks: [TaskId: TaskStatus]())
    for success in fresh.successes where watched.contains(success.id) {
      known.successes[success.id] = success
    }
    for task in fresh.tasks where watched.contains(task.id) { known.tasks[task.id] = task }
    state.withLock { $0.known = known }
    return (fresh.successes, known.tasks)
  }

  /// At the first look only: the episodes recorded before (nil afterwards, or with no store).
  private func recordedEpisodes() async -> [TaskId: Date]? {
    guard let episodes, !state.withLock({ $0.resumed }) else { return nil }
    state.withLock { $0.resumed = true }
    do {
      return try await episodes.load()
    } catch {
      logger.warning(
        "cannot read the stale episodes recorded before; stale jobs are reported again",
        metadata: ["error": "\(error)"])
      return nil
    }
  }

  private func report(
    _ update: AlertTracker.Update, alerts: [TaskId: JobAlerts], successes: [TaskSuccess],
    tasks: [TaskId: TaskStatus], changed: Bool
  ) {
    for stale in update.began {
      let message = problems().first { $0.taskId == stale.id }?.message ?? "stale"
      logger.error("job is stale: \(message)", metadata: ["job": "\(stale.id)"])
      notices?.stale(job: stale.id, message: message)
      if let argv = alerts[stale.id]?.onStale {
        submit(
          .init(
            argv: argv, job: stale.id, result: "stale", reason: message,
            lastSuccessAt: stale.lastSuccessAt))
      }
    }
    for id in update.ended { logger.notice("job is no longer stale", metadata: ["job": "\(id)"]) }
    for id in update.failed {
      let lastSuccess = successes.first { $0.id == id }?.lastSuccessAt
      notices?.failed(job: id, reason: tasks[id]?.lastReason ?? "", lastSuccessAt: lastSuccess)
      guard let argv = alerts[id]?.onFailure else { continue }
      submit(
        .init(
          argv: argv, job: id, result: "failure", reason: tasks[id]?.lastReason ?? "",
          lastSuccessAt: lastSuccess))
    }
    if changed {
      let stale = update.stale.map(\.id.rawValue)
      notify(
        stale.isEmpty
          ? "STATUS=no job is stale"
          : "STATUS=\(stale.count) stale job(s): \(stale.joined(separator: ", "))")
    }
    guard let metrics else { return }
    let staleIds = Set(update.stale.map(\.id))
    for success in successes {
      if let at = success.lastSuccessAt {
        metrics.setLastSuccess(job: success.id.rawValue, at: at)
      }
      if alerts[success.id]?.alertAfter != nil {
        metrics.setStale(job: success.id.rawValue, stale: staleIds.contains(success.id))
      }
    }
    metrics.writeSoon { [logger] error in
      logger.warning("cannot write metrics file", metadata: ["error": "\(error)"])
    }
  }

  private static func activity(_ task: TaskStatus) -> StalenessMessage.Activity {
    StalenessMessage.Activity(
      waitingFor: task.pendingPredicates, lastResult: task.lastResult,
      lastReason: task.lastReason, lastRunEndedAt: task.lastRunEndedAt)
  }

  /// Whether `event` may make a job stale or not, or be a failure to report.
  static func mayChangeAlerts(_ kind: MonitorEvent.Kind) -> Bool {
    switch kind {
    case .workCompleted, .attemptFailed, .attemptDeferred, .scheduled, .scheduleReplaced,
      .cancelled, .workStopped:
      true
    default:
      false
    }
  }
}
