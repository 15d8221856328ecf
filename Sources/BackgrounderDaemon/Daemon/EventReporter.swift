import Backgrounder
import Locking
import Logging

/// Turns runtime events into log lines and metrics.
///
/// Every run counted in `backgrounder_runs_total` is counted once in
/// `backgrounder_results_total` when it ends, however it ends: a worker's result, or `retry` for
/// a run stopped (a condition lost, shutdown) or ended before its work began (the network changed
/// between the decision and the start, the store failed), `failure` for a run whose factory
/// declined, `cancelled` for a run cancelled or replaced. So runs started = results + runs in
/// flight, per job.
struct EventReporter: Sendable {
  let logger: Logger
  let metrics: MetricsFile?
  /// The jobs with a run started and not yet ended (a job has at most one run at a time).
  private let inFlight = JobsInFlight()

  init(logger: Logger, metrics: MetricsFile?) {
    self.logger = logger
    self.metrics = metrics
  }

  /// Counts `result` for the run of `job` in flight, if there is one; an event of a job with
  /// no run in flight (a deferral at the gate, the cancel of an idle task) counts nothing.
  private func endRun(of job: String, as result: String) {
    guard inFlight.jobs.withLock({ $0.remove(job) }) != nil else { return }
    metrics?.recordResult(job: job, result: result)
  }

  func report(_ event: MonitorEvent) {
    let job = event.taskId?.rawValue ?? "-"
    let metadata: Logger.Metadata = ["job": "\(job)"]
    switch event.kind {
    case .workStarted(let attempt):
      logger.info(
        "run started (attempt \(attempt))",
        metadata: metadata.merging(["attempt": "\(attempt)"]) { $1 })
      inFlight.jobs.withLock { _ = $0.insert(job) }
      metrics?.recordRunStarted(job: job)
    case .workCompleted(let attempt, let result, let runtime):
      let name: String
      switch result {
      case .success: name = "success"
      case .failure: name = "failure"
      case .retry: name = "retry"
      }
      // A failure is an error in the journal (PRIORITY=3); success and retry are info.
      logger.log(
        level: name == "failure" ? .error : .info,
        "run finished: \(name) (attempt \(attempt), \(HumanText.duration(runtime)))",
        metadata: metadata.merging(["attempt": "\(attempt)"]) { $1 })
      inFlight.jobs.withLock { _ = $0.remove(job) }
      metrics?.recordResult(job: job, result: name)
      // What the alert watch reads from the store at start, kept current without reading it
      // again after every run.
      if name == "success", let id = event.taskId {
        metrics?.setLastSuccess(job: id.rawValue, at: event.time)
      }
    case .attemptDeferred(let reason):
      logger.info("run deferred: \(reason.rawValue)", metadata: metadata)
      metrics?.recordDeferral(job: job, reason: reason.rawValue)
      endRun(of: job, as: "retry")
    case .attemptFailed(let reason):
      logger.warning("attempt failed: \(reason.rawValue)", metadata: metadata)
      // Also an attempt a kill -9 interrupted before this start (no run of this process).
      inFlight.jobs.withLock { _ = $0.remove(job) }
      metrics?.recordResult(job: job, result: "retry")
    case .retryScheduled(let nextAttempt, let delay):
      logger.info(
        "retry \(nextAttempt) scheduled in \(HumanText.duration(delay))", metadata: metadata)
      metrics?.recordRetry(job: job)
    case .workStopped(let attempt, let reason):
      logger.notice(
        "run stopped: \(reason.phrase) (\(reason.rawValue), attempt \(attempt))",
        metadata: metadata.merging(["reason": "\(reason.rawValue)"]) { $1 })
      metrics?.recordStop(job: job, reason: reason.rawValue)
      endRun(of: job, as: "retry")
    case .workPaused(let attempt, let reason):
      logger.notice(
        "run paused: \(reason.lostCondition) (\(reason.rawValue), attempt \(attempt))",
        metadata: metadata.merging(["reason": "\(reason.rawValue)"]) { $1 })
      metrics?.recordPause(job: job, reason: reason.rawValue)
    case .workResumed(let attempt, let paused):
      logger.notice(
        "run resumed after \(HumanText.duration(paused)) paused (attempt \(attempt))",
        metadata: metadata)
    case .workerAbandoned(let attempt):
      logger.error(
        "worker ignored cancellation and was abandoned (attempt \(attempt))", metadata: metadata)
    case .libraryError(let message):
      logger.error("runtime error: \(message)", metadata: metadata)
      endRun(of: job, as: "retry")
    case .skipped(let reason):
      logger.notice("skipped: \(reason.rawValue)", metadata: metadata)
      endRun(of: job, as: "failure")
    case .cancelled(let source):
      logger.info("cancelled (\(source.rawValue))", metadata: metadata)
      endRun(of: job, as: source == .shutdown ? "retry" : "cancelled")
    case .scheduled, .scheduleReplaced:
      logger.info("scheduled", metadata: metadata)
    case .progress:
      return
    }
    metrics?.writeSoon { [logger] error in
      logger.warning("cannot write metrics file", metadata: ["error": "\(error)"])
    }
  }

  func writeMetrics() {
    do {
      try metrics?.write()
    } catch {
      logger.warning("cannot write metrics file", metadata: ["error": "\(error)"])
    }
  }
}

/// The jobs ``EventReporter`` saw start a run that has not ended yet.
private final class JobsInFlight: Sendable {
  let jobs = Lock<Set<String>>([])
}
