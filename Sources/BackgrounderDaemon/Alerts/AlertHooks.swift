import Backgrounder
import Foundation
import Logging

/// Runs the `on-failure` and `on-stale` hooks as jobs run: through the ``CommandRunner`` (own
/// session and cgroup, output logged and bounded), with the environment allow-list of
/// `JobEnvironment` plus `BACKGROUNDER_TASK_ID`, `BACKGROUNDER_RESULT` (`failure` or `stale`),
/// `BACKGROUNDER_REASON`, `BACKGROUNDER_LAST_SUCCESS` (ISO 8601, empty when never) and
/// `BACKGROUNDER_COALESCED` (how many earlier events of the job this run stands for too), until
/// a deadline (``HookSchedule`` decides which hooks run when). A hook that fails is logged and
/// not run again for the same event.
struct AlertHooks: Sendable {
  /// One hook to run.
  struct Call: Sendable, Equatable {
    var argv: [String]
    var job: TaskId
    /// `failure` or `stale`.
    var result: String
    var reason: String
    var lastSuccessAt: Date?
    /// How many earlier events of the same job and kind were merged into this call (their
    /// hooks did not run): 0 for a hook run for one event.
    var coalesced = 0
  }

  let runner: CommandRunner
  let logger: Logger
  /// The daemon's environment, filtered as a job's is.
  var daemonEnvironment: [String: String] = ProcessInfo.processInfo.environment

  /// The environment `call` runs with.
  func environment(for call: Call) -> [String: String] {
    JobEnvironment.build(
      daemon: daemonEnvironment, inherit: false, job: [:],
      backgrounder: [
        "BACKGROUNDER_TASK_ID": call.job.rawValue,
        "BACKGROUNDER_RESULT": call.result,
        "BACKGROUNDER_REASON": call.reason,
        "BACKGROUNDER_LAST_SUCCESS": call.lastSuccessAt.map(ISO8601.string) ?? "",
        "BACKGROUNDER_COALESCED": "\(call.coalesced)",
      ])
  }

  /// Runs `call` to its end, or until `deadline` on `clock` or the calling task's cancellation
  /// (the daemon stopping), which stop it (SIGTERM to its process group, SIGKILL after the
  /// runner's grace period); returns how it ended.
  @discardableResult
  func run(_ call: Call, until deadline: WallInstant, on clock: any WallClock) async
    -> CommandOutcome.Termination?
  {
    let metadata: Logger.Metadata = [
      "job": "\(call.job)", "hook": "on-\(call.result)", "command": "\(call.argv[0])",
    ]
    let runner = runner
    let environment = environment(for: call)
    let outcome = await withTaskGroup(of: CommandOutcome?.self, returning: CommandOutcome?.self) {
      group in
      group.addTask {
        await runner.run(
          argv: call.argv, environment: environment, workingDirectory: nil,
          jobID: call.job.rawValue)
      }
      group.addTask {
        try? await clock.sleep(until: deadline, tolerance: nil)
        return nil
      }
      if let first = await group.next(), let outcome = first {
        group.cancelAll()
        return outcome
      }
      // Past its budget: the runner stops the hook on cancellation and returns its end.
      group.cancelAll()
      let late: CommandOutcome?? = await group.next()
      return late ?? nil
    }
    guard let outcome else { return nil }
    switch outcome.termination {
    case .exited(0):
      logger.info("hook ran", metadata: metadata)
    default:
      logger.warning(
        "hook failed; it is not run again for this event",
        metadata: metadata.merging(["outcome": "\(outcome.termination)"]) { $1 })
    }
    return outcome.termination
  }
}
