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
    // Stored exactly as the config has them now: nothing to do, nothing decoded.
    var unchanged = Set<TaskId>()
    // The stored definitions already read (each is decoded once).
    var decoded: [TaskId: StoredJob.Decoded] = [:]
    var batch: [(JobDefinition, ExistingWorkPolicy)] = []
    // Unchanged active jobs stored without this build's digest of their table.
    var undigested: [(JobDefinition, ExistingWorkPolicy)] = []
    let digests = configuration.jobDigests
    for job in configuration.jobs {
      guard let id = try? TaskId(job.id) else { continue }
      wanted.insert(id)
      if let existing = stored[id], existing.inhibitPolicy == job.inhibit ?? .delay {
        // Stored from this very table by this build: unchanged, known without encoding the
        // definition (encoding every job to compare it was most of a restart's CPU with
        // 10,000 jobs; decoding every stored one, before that, most of the rest).
        if let digest = digests[job.id], existing.hasInput(StoredJob.digestKey, .string(digest)) {
          unchanged.insert(id)
          continue
        }
        // The stored input is byte for byte what this job would store now.
        if let input = try? StoredJob.input(for: job, origin: .config, digest: digests[job.id]),
          existing.hasInput(input)
        {
          unchanged.insert(id)
          continue
        }
      }
      let previous = stored[id].flatMap { StoredJob.decode($0.input) }
      if let previous { decoded[id] = previous }
      guard let policy = Self.policy(for: job, existing: stored[id], previous: previous?.job)
      else {
        // The same definition, stored by another build (or before digests): an active config
        // job is stored again with this build's digest, its schedule kept (`update`), so that
        // the next start knows it unchanged without comparing. Once per job and build.
        if let existing = stored[id], !existing.state.isFinished, previous?.origin == .config,
          digests[job.id] != nil
        {
          rescheduled.insert(id)
          undigested.append((job, .update))
        }
        continue
      }
      rescheduled.insert(id)
      batch.append((job, policy))
    }
    // Every new or changed job in one step and one store transaction.
    for (ok, message) in await schedule(batch, origin: .config, digests: digests) where !ok {
      // A job the runtime cannot take (say `fixed-random-delay` without a machine id).
      logger.error("job not scheduled", metadata: ["error": "\(message)"])
    }
    if !undigested.isEmpty {
      let results = await schedule(undigested, origin: .config, digests: digests, logEach: false)
      logger.info(
        "unchanged jobs stored with this build's digest of their config table",
        metadata: [
          "jobs": "\(results.count { $0.ok })",
          "failed": "\(results.filter { !$0.ok }.map(\.message))",
        ])
    }
    for (id, task) in stored.sorted(by: { $0.key < $1.key })
    where !task.state.isFinished && !unchanged.contains(id) {
      guard let job = decoded[id] ?? StoredJob.decode(task.input) else { continue }
      if !wanted.contains(id) && job.origin == .config {
        let outcome = await runtime.cancel(id)
        logger.info(
          "job removed from the config: cancelled",
          metadata: ["job": "\(id)", "outcome": "\(outcome)"])
      } else if job.format < StoredJob.currentFormat, !rescheduled.contains(id) {
        await migrate(job)
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
    await schedule([(job, policy)], origin: origin)[0]
  }

  /// Schedules each job with its policy, all in one step of the runtime (one store
  /// transaction); returns each one's outcome in words and whether it took effect, in order.
  /// `digests`: the config tables' ``JobDigest``s, stored with the jobs; `logEach`: a journal
  /// line per job.
  func schedule(
    _ jobs: [(JobDefinition, ExistingWorkPolicy)], origin: JobOrigin,
    digests: [String: String] = [:], logEach: Bool = true
  ) async -> [(ok: Bool, message: String)] {
    var results: [(ok: Bool, message: String)?] = Array(repeating: nil, count: jobs.count)
    var requests: [(index: Int, request: WorkRequest, policy: ExistingWorkPolicy)] = []
    for (index, (job, policy)) in jobs.enumerated() {
      do {
        let request = try JobRequests.request(
          for: job, origin: origin, digest: digests[job.id], machineIdPath: machineIdPath)
        requests.append((index, request, policy))
      } catch {
        results[index] = (false, "\(job.id): \(error)")
      }
    }
    let outcomes = await runtime.schedule(requests.map { ($0.request, $0.policy) })
    for ((index, _, policy), outcome) in zip(requests, outcomes) {
      let id = jobs[index].0.id
      if logEach {
        logger.info(
          "job scheduled",
          metadata: ["job": "\(id)", "policy": "\(policy)", "outcome": "\(outcome)"])
      }
      results[index] =
        switch outcome {
        case .scheduled: (true, "scheduled \(id)")
        case .keptExisting: (true, "kept the existing schedule of \(id)")
        case .rejected(let reason): (false, "\(id) rejected: \(reason)")
        }
    }
    return results.map { $0 ?? (false, "not scheduled") }
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
    policy(
      for: job, existing: existing, previous: existing.flatMap { JobRequests.job(in: $0.input)?.0 })
  }

  /// What to do with `job` given the stored task and the definition it carries (`previous`,
  /// already decoded): nil when nothing changed.
  static func policy(
    for job: JobDefinition, existing: TaskStatus?, previous: JobDefinition?
  ) -> ExistingWorkPolicy? {
    guard let existing, let previous else { return .replace }
    // A task stored before the request carried the policy has the default one.
    if previous == job, existing.inhibitPolicy == job.inhibit ?? .delay { return nil }
    if existing.state.isFinished { return .replace }
    if case .once = job.schedule { return .replace }
    return .update
  }
}
