import Backgrounder
import BackgrounderLinux
import Logging
import SystemCalls

/// What the daemon does around sleep and shutdown: on `PrepareForSleep(true)` or
/// `PrepareForShutdown(true)` nothing new starts and the runs under a `delay` lock are stopped
/// (the job's stop signal, then SIGKILL after its stop timeout cut to fit logind's
/// `InhibitDelayMaxSec`, see ``SleepStopGrace``), recorded as a retry with the reason "system suspending" and no attempt
/// used; their locks go with them. Runs under a `block` lock (and `inhibit = "none"`) go on.
/// On `false` due times are re-evaluated at once, and network jobs pass the gate as usual.
enum SystemSleepStops {
  static func watch(
    runtime: Backgrounder, sources: LinuxConditionSources, runner: CommandRunner, logger: Logger
  ) throws(SystemCallError) -> SystemSleepFollower {
    try sources.followSystemSleep(of: runtime) { sleeping, jobIDs, inhibitDelayMax in
      // Before the runtime stops them: the runs of those jobs going now.
      let runIDs = runner.containment.live.runIDs(of: Set(jobIDs))
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
  }
}
