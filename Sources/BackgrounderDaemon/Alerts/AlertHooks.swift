import Backgrounder
import Foundation
import Logging

/// Runs the `on-failure` and `on-stale` hooks as jobs run: through the ``CommandRunner`` (own
/// session and cgroup, output logged and bounded), with the environment allow-list of
/// `JobEnvironment` plus `BACKGROUNDER_TASK_ID`, `BACKGROUNDER_RESULT` (`failure` or `stale`),
/// `BACKGROUNDER_REASON` and `BACKGROUNDER_LAST_SUCCESS` (ISO 8601, empty when never), within
/// ``budget``. A hook that fails is logged and not run again for the same event.
struct AlertHooks: Sendable {
  /// One hook to run.
  struct Call: Sendable, Equatable {
    var argv: [String]
    var job: TaskId
    /// `failure` or `stale`.
    var result: String
    var reason: String
    var lastSuccessAt: Date?
  }

  let runner: CommandRunner
  let logger: Logger
  /// The daemon's environment, filtered as a job's is.
  var daemonEnvironment: [String: String] = ProcessInfo.processInfo.environment
  /// How long a hook may run before it is stopped.
  var budget: Duration = .seconds(300)

  /// The environment `call` runs with.
  func environment(for call: Call) -> [String: String] {
    JobEnvironment.build(
      daemon: daemonEnvironment, inherit: false, job: [:],
      backgrounder: [
        "BACKGROUNDER_TASK_ID": call.job.rawValue,
        "BACKGROUNDER_RESULT": call.result,
        "BACKGROUNDER_REASON": call.reason,
        "BACKGROUNDER_LAST_SUCCESS": call.lastSuccessAt.map(ISO8601.string) ?? "",
      ])
  }

  /// Runs `call` to its end (or its budget's); returns how it ended.
  @discardableResult
  func run(_ call: Call) async -> CommandOutcome.Termination? {
    let metadata: Logger.Metadata = [
      "job": "\(call.job)", "hook": "on-\(call.result)", "command": "\(call.argv[0])",
    ]
    let runner = runner
    let environment = environment(for: call)
    let budget = budget
    let outcome = await withTaskGroup(of: CommandOutcome?.self, returning: CommandOutcome?.self) {
      group in
      group.addTask {
        await runner.run(
          argv: call.argv, environment: environment, workingDirectory: nil,
          jobID: call.job.rawValue)
      }
      group.addTask {
        try? await Task.sleep(for: budget)
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
