import Backgrounder
import EventLoops
import Logging

/// What the daemon does around sleep and shutdown: on `PrepareForSleep(true)` or
/// `PrepareForShutdown(true)` nothing new starts and the runs under a `delay` lock are stopped
/// (SIGTERM, then SIGKILL after the grace period — within logind's delay), recorded as a retry
/// with the reason "system suspending" and no attempt used; their locks go with them. Runs
/// under a `block` lock (and `inhibit = "none"`) go on. On `false` due times are re-evaluated
/// at once, and network jobs pass the gate as usual.
enum SystemSleepStops {
  static func watch(
    runtime: Backgrounder, inhibitor: SleepInhibitor, eventLoop: EventLoop, logger: Logger
  ) -> LogindSleepWatch {
    let watch = LogindSleepWatch(eventLoop: eventLoop, logger: logger) { sleeping in
      let stopping =
        sleeping ? inhibitor.runningJobs(mode: .delay).compactMap { try? TaskId($0) } : []
      runtime.systemSleeping(sleeping, stopping: stopping)
    }
    watch.start()
    return watch
  }
}
