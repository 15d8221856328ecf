import Backgrounder
import EventLoops
import Logging
import Logind

/// What the daemon does around sleep and shutdown: on `PrepareForSleep(true)` or
/// `PrepareForShutdown(true)` nothing new starts and the runs under a `delay` lock are stopped
/// (the job's stop signal, then SIGKILL after its stop timeout cut to fit logind's
/// `InhibitDelayMaxSec`, see ``SleepStopGrace``), recorded as a retry with the reason "system suspending" and no attempt
/// used; their locks go with them. Runs under a `block` lock (and `inhibit = "none"`) go on.
/// On `false` due times are re-evaluated at once, and network jobs pass the gate as usual.
enum SystemSleepStops {
  static func watch(
    runtime: Backgrounder, inhibitor: SleepInhibitor, runner: CommandRunner,
    eventLoop: EventLoop, logger: Logger
  ) -> LogindSleepWatch {
    let watch = LogindSleepWatch(eventLoop: eventLoop, logger: logger) {
      sleeping, inhibitDelayMax in
      let jobIDs = sleeping ? inhibitor.runningJobs(mode: .delay) : []
      let runIDs = runner.containment.live.runIDs(of: Set(jobIDs))
      runtime.systemSleeping(sleeping, stopping: jobIDs.compactMap { try? TaskId($0) })
      // Each run has its job's stop-timeout (the runner's grace by default), at most
      // StopSignal.timeoutRange's end: whatever still goes at logind's delay is killed then.
      let longest = max(runner.gracePeriod, StopSignal.timeoutRange.upperBound)
      let grace = SleepStopGrace.grace(runner: longest, inhibitDelayMax: inhibitDelayMax)
      guard !runIDs.isEmpty, grace < longest else { return }
      logger.info(
        "runs stopped for sleep are killed after \(grace), within logind's delay",
        metadata: ["jobs": "\(jobIDs.sorted().joined(separator: ", "))"])
      Task {
        try? await Task.sleep(for: grace)
        runner.containment.live.kill(runIDs: runIDs)
      }
    }
    watch.start()
    return watch
  }
}
