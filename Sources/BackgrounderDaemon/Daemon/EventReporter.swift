import Backgrounder
import Logging

/// Turns runtime events into log lines and metrics.
struct EventReporter: Sendable {
  let logger: Logger
  let metrics: MetricsFile?

  func report(_ event: MonitorEvent) {
    let job = event.taskId?.rawValue ?? "-"
    let metadata: Logger.Metadata = ["job": "\(job)"]
    switch event.kind {
    case .workStarted(let attempt):
      logger.info(
        "run started (attempt \(attempt))",
        metadata: metadata.merging(["attempt": "\(attempt)"]) { $1 })
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
      metrics?.recordResult(job: job, result: name)
    case .attemptDeferred(let reason):
      logger.info("run deferred: \(reason.rawValue)", metadata: metadata)
      metrics?.recordDeferral(job: job, reason: reason.rawValue)
    case .attemptFailed(let reason):
      logger.warning("attempt failed: \(reason.rawValue)", metadata: metadata)
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
    case .skipped(let reason):
      logger.notice("skipped: \(reason.rawValue)", metadata: metadata)
    case .cancelled(let source):
      logger.info("cancelled (\(source.rawValue))", metadata: metadata)
    case .scheduled, .scheduleReplaced:
      logger.info("scheduled", metadata: metadata)
    case .progress:
      return
    }
    writeMetrics()
  }

  func writeMetrics() {
    do {
      try metrics?.write()
    } catch {
      logger.warning("cannot write metrics file", metadata: ["error": "\(error)"])
    }
  }
}
