import Backgrounder
import EventLoops
import Logging

/// What the daemon does around sleep and shutdown: on `PrepareForSleep(true)` or
/// `PrepareForShutdown(true)` nothing new starts and the runs under a `delay` lock are stopped
/// (SIGTERM, then SIGKILL after the grace period cut to fit logind's `InhibitDelayMaxSec`, see
/// ``SleepStopGrace``), recorded as a retry with the reason "system suspending" and no attempt
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
      let grace = SleepStopGrace.grace(
        runner: runner.gracePeriod, inhibitDelayMax: inhibitDelayMax)
      guard !runIDs.isEmpty, grace < runner.gracePeriod else { return }
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
