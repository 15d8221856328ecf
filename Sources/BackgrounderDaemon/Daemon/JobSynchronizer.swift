import Backgrounder
import Logging

/// Brings the runtime's tasks in line with the config file, on start and on every reload:
/// new jobs are scheduled; changed periodic jobs keep their next run and attempts (policy
/// `update`); a changed one-time job runs again; an unchanged one — even a finished one — is left
/// alone; jobs removed from the file are cancelled. Jobs added with `schedule` are not touched,
/// except that any active job still stored in an older format is rewritten in the current one
/// (policy `update`: its schedule, attempts and results are kept).
package actor JobSynchronizer {
  private let runtime: Backgrounder
  private let logger: Logger
  /// The machine id file `fixed-random-delay` reads.
  private let machineIdPath: String

  package init(
    runtime: Backgrounder, logger: Logger, machineIdPath: String = MachineIdentity.defaultPath
  ) {
    self.runtime = runtime
    self.logger = logger
    self.machineIdPath = machineIdPath
  }

  /// Applies `configuration`'s jobs.
  package func apply(_ configuration: DaemonConfiguration) async {
    let stored: [TaskId: TaskStatus]
    do {
      stored = Dictionary(
        try await runtime.storedTasks(historyLimit: 0).map { ($0.id, $0) },
        uniquingKeysWith: { first, _ in first })
    } catch {
      logger.error("cannot read the store to apply the config", metadata: ["error": "\(error)"])
      return
    }
    var wanted = Set<TaskId>()
    var rescheduled = Set<TaskId>()
    for job in configuration.jobs {
      guard let id = try? TaskId(job.id) else { continue }
      wanted.insert(id)
      guard let policy = Self.policy(for: job, existing: stored[id]) else { continue }
      rescheduled.insert(id)
      let (ok, message) = await schedule(job, origin: .config, policy: policy)
      // A job the runtime cannot take (say `fixed-random-delay` without a machine id).
      if !ok { logger.error("job not scheduled", metadata: ["error": "\(message)"]) }
    }
    for (id, task) in stored.sorted(by: { $0.key < $1.key }) where !task.state.isFinished {
      guard let decoded = StoredJob.decode(task.input) else { continue }
      if !wanted.contains(id) && decoded.origin == .config {
        let outcome = await runtime.cancel(id)
        logger.info(
          "job removed from the config: cancelled",
          metadata: ["job": "\(id)", "outcome": "\(outcome)"])
      } else if decoded.format < StoredJob.currentFormat, !rescheduled.contains(id) {
        await migrate(decoded)
      }
    }
  }

  /// Rewrites a job stored in an older format, keeping its schedule.
  private func migrate(_ stored: StoredJob.Decoded) async {
    let (ok, message) = await schedule(stored.job, origin: stored.origin, policy: .update)
    logger.info(
      "job definition rewritten in storage format \(StoredJob.currentFormat)",
      metadata: [
        "job": "\(stored.job.id)", "from": "\(stored.format)", "ok": "\(ok)",
        "outcome": "\(message)",
      ])
  }

  /// Schedules one job; returns the outcome in words and whether it took effect.
  package func schedule(
    _ job: JobDefinition, origin: JobOrigin, policy: ExistingWorkPolicy = .replace
  ) async -> (ok: Bool, message: String) {
    let request: WorkRequest
    do {
      request = try JobRequests.request(for: job, origin: origin, machineIdPath: machineIdPath)
    } catch {
      return (false, "\(job.id): \(error)")
    }
    let outcome = await runtime.schedule(request, policy: policy)
    logger.info(
      "job scheduled",
      metadata: ["job": "\(job.id)", "policy": "\(policy)", "outcome": "\(outcome)"])
    switch outcome {
    case .scheduled: return (true, "scheduled \(job.id)")
    case .keptExisting: return (true, "kept the existing schedule of \(job.id)")
    case .rejected(let reason): return (false, "\(job.id) rejected: \(reason)")
    }
  }

  /// Runs `id` now, bypassing its constraints and backoff (`backgrounder trigger`). A finished
  /// one-time job, still in the store, is scheduled once more from its stored definition and
  /// run at once. Returns the outcome in words and whether it took effect.
  package func trigger(_ id: TaskId) async -> (triggered: Bool, ok: Bool, message: String) {
    switch runtime.runNow(id) {
    case .triggered: return (true, true, "triggered \(id)")
    case .alreadyRunning: return (false, true, "\(id) is already running")
    case .notRunning: return (false, false, "the daemon is shutting down")
    case .noSuchTask: break
    }
    let stored: TaskStatus?
    do {
      stored = try await runtime.storedTasks(historyLimit: 0).first { $0.id == id }
    } catch {
      return (false, false, "cannot read the store to find \(id): \(error)")
    }
    guard let stored, stored.state.isFinished, stored.kind == .oneTime,
      let (job, origin) = JobRequests.job(in: stored.input)
    else { return (false, false, "no such job: \(id)") }
    let (ok, message) = await schedule(job, origin: origin)
    guard ok else { return (false, false, message) }
    switch runtime.runNow(id) {
    case .triggered:
      return (true, true, "triggered \(id) (it had finished; running it once more)")
    case .alreadyRunning:  // the new schedule was due at once
      return (false, true, "\(id) had finished; it is running once more")
    case .noSuchTask, .notRunning: return (false, false, "\(id) could not be triggered")
    }
  }

  /// What to do with `job` given the stored task: nil when nothing changed.
  static func policy(for job: JobDefinition, existing: TaskStatus?) -> ExistingWorkPolicy? {
    guard let existing, let (previous, _) = JobRequests.job(in: existing.input) else {
      return .replace
    }
    // A task stored before the request carried the policy has the default one.
    if previous == job, existing.inhibitPolicy == job.inhibit ?? .delay { return nil }
    if existing.state.isFinished { return .replace }
    if case .once = job.schedule { return .replace }
    return .update
  }
}
