import Backgrounder
import Logging

/// Runs a daemon job's command: exit 0 → success, 75 (EX_TEMPFAIL) → retry, anything else →
/// failure with the exit status as the reason. Cancellation (budget expiry, lost constraint,
/// shutdown) reaches the process group through `CommandRunner` and is recorded by the runtime.
public struct CommandWorker: Worker {
  /// `EX_TEMPFAIL` from sysexits.h: "try again later".
  public static let retryExitStatus: Int32 = 75

  let runner: CommandRunner
  let network: any NetworkConditionSource

  public init(runner: CommandRunner, network: any NetworkConditionSource) {
    self.runner = runner
    self.network = network
  }

  public func execute(_ context: WorkContext) async -> WorkResult {
    guard let (job, _) = JobRequests.job(in: context.input) else {
      return .failure(reason: "the stored request carries no job definition")
    }
    let conditions = network.current
    var environment = job.environment
    environment["BACKGROUNDER_TASK_ID"] = context.taskId.rawValue
    environment["BACKGROUNDER_ATTEMPT"] = "\(context.attempt)"
    environment["BACKGROUNDER_METERED"] = conditions.isDataMetered ? "1" : "0"
    environment["BACKGROUNDER_PRIMARY_LINK"] = conditions.primaryLink ?? ""
    environment["BACKGROUNDER_CONNECTIVITY"] = conditions.connectivity.rawValue
    let outcome = await runner.run(
      argv: job.command, environment: environment, workingDirectory: job.workingDirectory,
      jobID: job.id)
    return Self.result(of: outcome)
  }

  /// The work result for a finished command.
  static func result(of outcome: CommandOutcome) -> WorkResult {
    let tail = outcome.outputTail.isEmpty ? "" : "\n" + outcome.outputTail
    switch outcome.termination {
    case .exited(0): return .success
    case .exited(retryExitStatus): return .retry
    case .exited(let status): return .failure(reason: "exit status \(status)\(tail)")
    case .signaled(let signal): return .failure(reason: "killed by signal \(signal)\(tail)")
    case .failedToStart(let reason): return .failure(reason: "could not start: \(reason)")
    }
  }
}
