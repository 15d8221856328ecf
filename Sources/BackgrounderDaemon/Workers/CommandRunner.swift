import EventLoops
import Foundation
import Locking
import Logging

/// How a command run ended.
package struct CommandOutcome: Sendable, Equatable {
  /// Why the process is gone.
  package enum Termination: Sendable, Equatable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it (for example SIGKILL after the grace period).
    case signaled(Int32)
    /// It never started (program not found, not executable, bad working directory).
    case failedToStart(String)
  }

  package var termination: Termination
  /// The last lines it printed on stdout and stderr, interleaved as they arrived.
  package var outputTail: String
  /// The last lines it printed on stderr.
  package var errorTail: String = ""
  /// The kernel's OOM killer ended a process of the run for exceeding its `memory-max`.
  package var exceededMemoryMax = false
  /// With `bandwidth-required`: the cap could not be applied (its class, its `net_prio`
  /// cgroup), so the command was not started or was killed before it executed.
  package var bandwidthUnapplied = false
  /// How a stopped (cancelled) run ended, for its record: `stopped with SIGINT` or
  /// `killed with SIGKILL after 30 s`; nil when it was not stopped.
  package var stopped: String?
}

/// Runs an argv directly (no shell) in its own session and process group (and its own cgroup
/// when the containment has them), logging every output line with the job id. Both pipes are
/// read to the end whatever the line length; lines are logged escaped, truncated at 4 KiB and
/// at most at the rate limiter's pace. Cancelling the calling task sends the stop signal
/// (SIGTERM unless the job's `stop-signal` says otherwise) to the whole process group, then
/// SIGKILL after the stop timeout (`gracePeriod` unless the job's `stop-timeout` says
/// otherwise); whatever is left of the run when it ends — however it ends — is ended the same
/// way by `RunContainment`.
package struct CommandRunner: Sendable {
  /// Time between the stop signal and SIGKILL when the run is cancelled or leaves processes
  /// behind, for a run that does not bring its own `stopTimeout`.
  package var gracePeriod: Duration
  package var logger: Logger
  /// Where runs are contained and recorded.
  package var containment: RunContainment
  /// Longest line logged as is; longer ones are cut with a `… [truncated N bytes]` marker.
  package var maxLoggedLineLength = 4096
  /// Output lines logged at once before rate limiting, then per second.
  package var logBurst = 200
  package var logLinesPerSecond = 50

  /// The loop that watches runs' output and ends; nil: the process's shared one.
  package var eventLoop: EventLoop?

  package init(
    gracePeriod: Duration = .seconds(10), containment: RunContainment? = nil,
    eventLoop: EventLoop? = nil, logger: Logger
  ) {
    self.gracePeriod = gracePeriod
    self.logger = logger
    self.containment = containment ?? RunContainment(logger: logger)
    self.eventLoop = eventLoop
  }

  /// Runs `argv` with exactly `environment` at `priority`, returning once the process and
  /// everything else of the run is gone. Its log lines carry the job id, the run id and
  /// `attempt` when given. A stop sends it `stopSignal`, then SIGKILL after `stopTimeout`
  /// (``gracePeriod`` when nil). Once the process runs, `pausable` (when given) receives the
  /// function that freezes (`true`) or thaws (`false`) every process of the run
  /// (``RunContainment/setPaused(_:_:)``). With `identity`, a daemon running as root runs it as
  /// that user and group (its supplementary groups set first, by `setpriv`:
  /// ``RunIdentity/switchArguments``); the working directory is entered before the switch, the
  /// output pipes and the cgroup stay the daemon's. `bandwidth` caps the run's egress when the
  /// containment can (``RunShaping``). `starting` hears of the run's cgroup (nil: none) once it
  /// exists, before the command starts (its bytes are counted there).
  package func run(
    argv: [String], environment: [String: String], workingDirectory: String?, jobID: String,
    attempt: Int? = nil, priority: RunPriority = .background, stopSignal: Int32 = SIGTERM,
    stopTimeout: Duration? = nil, identity: RunIdentity? = nil,
    bandwidth: ShapingDecision = .unshaped, bandwidthRequired: Bool = false,
    pausable: (@Sendable (_ setPaused: @escaping @Sendable (Bool) -> Void) -> Void)? = nil,
    starting: (@Sendable (_ cgroup: String?) -> Void)? = nil
  ) async -> CommandOutcome {
    let stopTimeout = stopTimeout ?? gracePeriod
    guard let program = argv.first else {
      return CommandOutcome(termination: .failedToStart("empty command"), outputTail: "")
    }
    guard
      let resolved = ExecutableLookup.resolve(
        program, path: environment["PATH"], workingDirectory: workingDirectory)
    else {
      let problem = program.contains("/") ? "not an executable file" : "not found in PATH"
      return CommandOutcome(termination: .failedToStart("\(program): \(problem)"), outputTail: "")
    }
    // Only root may switch; a daemon not running as root was let run only its own user's jobs.
    let switched = geteuid() == 0 ? identity : nil
    if let switched, access(RunIdentity.setprivPath, X_OK) != 0 {
      return CommandOutcome(
        termination: .failedToStart(
          "running as \"\(switched.userName)\" needs \(RunIdentity.setprivPath) (util-linux)"),
        outputTail: "")
    }
    var scope = containment.begin(jobID: jobID, priority: priority)
    starting?(scope.cgroup)
    let shaping = containment.shaping
    let shaped = shaping?.begin(
      runID: scope.runID, jobID: jobID, decision: bandwidth, cgroup: scope.cgroup)
    if shaping == nil, case .unenforceable(let reason, _) = bandwidth {
      logger.warning(
        "bandwidth cap not enforced: the run goes uncapped",
        metadata: ["job": "\(jobID)", "reason": "\(reason)"])
    }
    if bandwidthRequired, case .shape = bandwidth, shaped == nil {
      // The cap was to be applied and could not be (logged): the run must not go uncapped.
      await containment.end(scope, grace: stopTimeout)
      var outcome = CommandOutcome(
        termination: .failedToStart("bandwidth-required: the cap could not be applied"),
        outputTail: "")
      outcome.bandwidthUnapplied = true
      return outcome
    }
    // Joins the held process to the run's net_prio cgroup before it execs the job; with
    // `bandwidth-required`, one that cannot join is killed before the job executes.
    let unapplied = Lock(false)
    var joinShaping: (@Sendable (pid_t) -> Void)?
    if let shaping, let shaped, shaped.netPrioCgroup != nil {
      let logger = logger
      joinShaping = { pid in
        do {
          try shaping.join(pid, shaped)
        } catch {
          logger.warning(
            bandwidthRequired
              ? "cannot move the run into its net_prio cgroup; it is ended (bandwidth-required)"
              : "cannot move the run into its net_prio cgroup; it goes uncapped",
            metadata: ["job": "\(jobID)", "error": "\(error)"])
          if bandwidthRequired {
            unapplied.withLock { $0 = true }
            kill(pid, SIGKILL)
          }
        }
      }
    }
    let launch = (switched?.switchArguments ?? []) + [resolved] + argv.dropFirst()
    let clock = ContinuousClock()
    let origin = clock.now
    // When the run was stopped (the calling task cancelled), for its record.
    let stopAt = Lock<ContinuousClock.Instant?>(nil)
    var metadata: Logger.Metadata = ["job": "\(jobID)", "run": "\(scope.runID)"]
    if let attempt { metadata["attempt"] = "\(attempt)" }
    let output = RunOutput(
      logger: logger, metadata: metadata,
      limiter: LogRateLimiter(burst: logBurst, linesPerSecond: logLinesPerSecond),
      now: { clock.now - origin })
    var outcome: CommandOutcome
    do {
      let loop = try eventLoop ?? EventLoop.shared()
      // Held before its exec: recorded, moved into its cgroups and put at its priority first.
      let process = try containment.live.registering {
        let process = try RunProcess.spawn(
          RunProcess.Command(
            path: launch[0], arguments: [argv[0]] + launch.dropFirst(),
            environment: environment, workingDirectory: workingDirectory))
        containment.started(&scope, pid: process.pid)
        return process
      }
      if RunPriorityControl.prepare(
        process.pid, at: priority, jobID: jobID, logger: logger, joining: scope.cgroup,
        whileHeld: joinShaping)
      {
        process.release()
      } else {
        process.abandon()
      }
      metadata["pid"] = "\(process.pid)"
      if let pausable {
        let running = scope
        let logMetadata = metadata
        // How the current pause froze the run: its thaw undoes that.
        let frozenBy = Lock<RunContainment.Freeze?>(nil)
        pausable { paused in
          if paused {
            let freeze = containment.freeze(running)
            frozenBy.withLock { $0 = freeze }
            logger.info("run frozen (\(freeze.rawValue))", metadata: logMetadata)
          } else if let freeze = frozenBy.withLock({ $0.take() }) {
            let how = containment.thaw(running, frozenBy: freeze)
            logger.info("run thawed (\(how))", metadata: logMetadata)
          }
        }
      }
      output.started(pid: process.pid)
      let lineLength = maxLoggedLineLength
      let splitters = Lock(
        (
          stdout: OutputLineSplitter(maxLineLength: lineLength),
          stderr: OutputLineSplitter(maxLineLength: lineLength)
        ))
      let termination = await withTaskCancellationHandler {
        await process.wait(on: loop) { stream, chunk in
          // On the loop's thread, one chunk at a time.
          switch stream {
          case .standardOutput:
            for line in splitters.withLock({ $0.stdout.append(chunk) }) {
              output.add(line, from: .stdout)
            }
          case .standardError:
            for line in splitters.withLock({ $0.stderr.append(chunk) }) {
              output.add(line, from: .stderr)
            }
          }
        }
      } onCancel: {
        stopAt.withLock { if $0 == nil { $0 = clock.now } }
        process.stop(signal: stopSignal, killAfter: stopTimeout, on: loop)
      }
      let (lastOut, lastErr) = splitters.withLock { ($0.stdout.finish(), $0.stderr.finish()) }
      if let lastOut { output.add(lastOut, from: .stdout) }
      if let lastErr { output.add(lastErr, from: .stderr) }
      let ended: CommandOutcome.Termination =
        switch termination {
        case .exited(let code): .exited(code)
        case .signaled(let signal): .signaled(signal)
        case .failedToStart(let errno): .failedToStart("\(program): \(errno)")
        }
      outcome = CommandOutcome(
        termination: ended, outputTail: output.tail, errorTail: output.errorTail)
    } catch {
      logger.error(
        "command could not be started", metadata: metadata.merging(["error": "\(error)"]) { $1 })
      outcome = CommandOutcome(
        termination: .failedToStart("\(program): \(error)"), outputTail: output.tail,
        errorTail: output.errorTail)
    }
    output.finish()
    if let cgroup = scope.cgroup {
      outcome.exceededMemoryMax = RunPriorityControl.oomKills(in: cgroup) > 0
    }
    let swept = await containment.end(scope, signal: stopSignal, grace: stopTimeout)
    if let shaped { shaping?.end(shaped) }
    if unapplied.withLock({ $0 }) { outcome.bandwidthUnapplied = true }
    if let stopped = stopAt.withLock({ $0 }) {
      outcome.stopped = StopSignal.record(
        signal: stopSignal, after: stopped.duration(to: clock.now),
        killed: swept == SIGKILL || outcome.termination == .signaled(SIGKILL))
    }
    return outcome
  }
}
