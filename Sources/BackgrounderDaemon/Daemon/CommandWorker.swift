import Backgrounder
import Foundation
import Logging

/// Runs a daemon job's command: exit 0 → success, 75 (EX_TEMPFAIL) → retry, anything else →
/// failure; retry and failure reasons carry the stderr tail, last line first
/// (`exit 75: server busy`).
/// Cancellation (budget expiry, lost constraint, shutdown) reaches the process group through
/// `CommandRunner` and is recorded by the runtime.
///
/// The `BACKGROUNDER_METERED`, `BACKGROUNDER_CONNECTIVITY` and `BACKGROUNDER_PRIMARY_LINK`
/// values are the snapshot the runtime let the run start under (``WorkContext/network``), and
/// the command is spawned only if the conditions are still that snapshot
/// (``WorkContext/confirmStart()``); otherwise it is not started and waits again.
package struct CommandWorker: Worker {
  /// `EX_TEMPFAIL` from sysexits.h: "try again later".
  package static let retryExitStatus: Int32 = 75

  let runner: CommandRunner
  /// The daemon's environment, filtered per job by `JobEnvironment`.
  let daemonEnvironment: [String: String]
  /// Counts each run's network bytes; none when nil.
  var networkBytes: RunNetworkCounting?
  /// Told the job id of each run that starts under relaxed conditions (`relax-after`).
  let onRelaxedRun: (@Sendable (String) -> Void)?

  package init(
    runner: CommandRunner,
    daemonEnvironment: [String: String] = ProcessInfo.processInfo.environment,
    onRelaxedRun: (@Sendable (String) -> Void)? = nil
  ) {
    self.onRelaxedRun = onRelaxedRun
    self.runner = runner
    self.daemonEnvironment = daemonEnvironment
  }

  package func execute(_ context: WorkContext) async -> WorkResult {
    guard let (job, _) = JobRequests.job(in: context.input) else {
      return .failure(reason: "the stored request carries no job definition")
    }
    let conditions = context.network
    var variables = job.environment
    if let file = job.environmentFile {
      do {
        variables = try EnvironmentFile.read(file, environment: daemonEnvironment)
          .merging(job.environment) { $1 }
      } catch {
        return .failure(reason: error.description)
      }
    }
    var identity: RunIdentity?
    if let user = job.user {
      switch RunIdentity.resolve(user: user, group: job.group) {
      case .success(let resolved): identity = resolved
      case .failure(let error): return .failure(reason: "could not start: \(error)")
      }
    }
    let environment = JobEnvironment.build(
      daemon: daemonEnvironment, inherit: job.inheritEnvironment, job: variables,
      backgrounder: [
        "BACKGROUNDER_TASK_ID": context.taskId.rawValue,
        "BACKGROUNDER_ATTEMPT": "\(context.attempt)",
        "BACKGROUNDER_METERED": conditions.isDataMetered ? "1" : "0",
        "BACKGROUNDER_PRIMARY_LINK": conditions.primaryLink ?? "",
        "BACKGROUNDER_CONNECTIVITY": conditions.connectivity.rawValue,
      ].merging(JobEnvironment.destinationVariables(job)) { $1 }
        .merging(context.relaxed ? ["BACKGROUNDER_RELAXED": "1"] : [:]) { $1 },
      user: identity?.environment())
    // The task's cap (its `WorkConstraints.bandwidth`), for the network the run starts on; a
    // task stored by an older daemon has it only in its stored job.
    let cap = context.bandwidthCap ?? job.bandwidth
    let bandwidth = ShapingDecision.decide(
      cap: cap, primaryLink: conditions.primaryLink,
      metered: conditions.isDataMetered,
      support: runner.containment.shaping?.support
        ?? .unavailable("this daemon does not shape runs"))
    if case .unenforceable(let reason, true) = bandwidth {
      let why = "bandwidth-required: the cap cannot be enforced (\(reason))"
      context.declineStart(reason: why)
      return .retry(reason: why)
    }
    guard context.confirmStart() else {
      return .retry(reason: "the network changed before the command started")
    }
    if context.relaxed { onRelaxedRun?(job.id) }
    // (The run's logind locks are taken here, by the confirmation above: the daemon registers
    // this worker through `LinuxConditionSources.holdingInhibitors(from: .confirmedStart)`,
    // which releases them while the run is paused.)
    var pausable: (@Sendable (@escaping @Sendable (Bool) -> Void) -> Void)?
    // Frozen for a lost condition (`on-condition-lost = "pause"`) or the user's return
    // (`on-user-return = "pause"`).
    if job.onConditionLost?.pauseMax != nil || job.onUserReturn == .pause {
      pausable = { setPaused in
        context.handlePauses { change in
          switch change {
          case .pause: setPaused(true)
          case .resume: setPaused(false)
          }
        }
      }
    }
    let run = { (starting: (@Sendable (String?) -> Void)?) in
      await runner.run(
        argv: job.command, environment: environment, workingDirectory: job.workingDirectory,
        jobID: job.id, attempt: context.attempt, priority: job.priority ?? .background,
        stopSignal: job.stopSignal ?? SIGTERM, stopTimeout: job.stopTimeout, identity: identity,
        bandwidth: bandwidth, bandwidthRequired: cap?.required ?? false,
        pausable: pausable, starting: starting)
    }
    let outcome =
      if let networkBytes {
        await networkBytes.counting(
          taskId: context.taskId, attempt: context.attempt, under: conditions,
          store: context.recordNetworkBytes, run)
      } else {
        await run(nil)
      }
    if outcome.bandwidthUnapplied {
      // The command did not start (the cap could not be applied): no attempt used.
      context.declineStart(
        reason: "bandwidth-required: the cap could not be applied (see the journal)")
    }
    if !outcome.outputTail.isEmpty { context.recordOutputTail(outcome.outputTail) }
    if let stopped = outcome.stopped { context.recordStop(stopped) }
    return Self.result(of: outcome)
  }

  /// The work result for a finished command.
  static func result(of outcome: CommandOutcome) -> WorkResult {
    // "exit 75: <last stderr line>", then the whole stderr tail when it has more lines.
    let lines =
      outcome.errorTail.isEmpty
      ? [] : outcome.errorTail.split(separator: "\n", omittingEmptySubsequences: false)
    let stderr =
      switch lines.count {
      case 0: ""
      case 1: ": \(lines[0])"
      default: ": \(lines[lines.count - 1])\n\(outcome.errorTail)"
      }
    if outcome.bandwidthUnapplied {
      return .retry(reason: "bandwidth-required: the cap could not be applied (see the journal)")
    }
    if outcome.exceededMemoryMax, outcome.termination != .exited(0) {
      return .failure(reason: "killed for exceeding memory-max (cgroup oom_kill)\(stderr)")
    }
    switch outcome.termination {
    case .exited(0): return .success
    case .exited(retryExitStatus): return .retry(reason: "exit \(retryExitStatus)\(stderr)")
    case .exited(let status): return .failure(reason: "exit status \(status)\(stderr)")
    case .signaled(let signal): return .failure(reason: "killed by signal \(signal)\(stderr)")
    case .failedToStart(let reason): return .failure(reason: "could not start: \(reason)")
    }
  }
}
