import Foundation
import Logging
import SystemCalls

/// Makes sure no process of a run outlives it: every run is its own session and process group,
/// in its own cgroup when a writable cgroup v2 subtree is available, and recorded on disk while
/// it runs. When the run ends — however it ends — what is left of its group and cgroup gets
/// its stop signal (SIGTERM by default), then SIGKILL after the grace period, and is reaped.
package struct RunContainment: Sendable {
  let cgroups: RunCgroups?
  let registry: RunRegistry?
  let logger: Logger
  /// Caps runs' egress (`bandwidth`); nil: caps are not enforced (tests, embedders).
  package var shaping: RunShaping?
  /// The runs going now.
  let live = LiveRuns()

  /// Containment by process group only, with no records: for tests and embedders.
  package init(logger: Logger) {
    self.init(cgroups: nil, registry: nil, logger: logger)
  }

  /// Containment with per-run cgroups under `cgroups` (when given) and, when `storePath` is
  /// given, run records in `<store directory>/runs/`.
  package init(cgroups: RunCgroups?, storePath: String?, logger: Logger) throws {
    self.init(
      cgroups: cgroups, registry: try storePath.map { try RunRegistry(storePath: $0) },
      logger: logger)
  }

  init(cgroups: RunCgroups?, registry: RunRegistry?, logger: Logger) {
    self.cgroups = cgroups
    self.registry = registry
    self.logger = logger
  }

  /// The daemon's containment, called once at start while holding the store lock: makes the
  /// daemon a child subreaper, uses its delegated cgroup when there is one, ends what is left
  /// of runs interrupted by the previous daemon's death, and finds whether bandwidth caps can be
  /// enforced (removing the classes such runs left, ``RunShaping/prepare(runsDirectory:logger:)``).
  package static func prepare(storePath: String, logger: Logger) async throws -> RunContainment {
    if !Subreaper.enable() {
      logger.warning(
        "cannot become a child subreaper; orphans of a run are reparented to PID 1",
        metadata: ["error": "\(SystemCallError.current("prctl").errno)"])
    }
    var containment = try RunContainment(
      cgroups: RunCgroups.delegated(logger: logger), storePath: storePath, logger: logger)
    await LeftoverRuns.terminate(in: containment)
    // After the leftover runs ended: their net_prio cgroups are empty and can go.
    containment.shaping = RunShaping.prepare(
      runsDirectory: containment.cgroups?.runsDirectory, logger: logger)
    return containment
  }

  /// Prepares a run of job `jobID`: its cgroup (with the weights and memory limit of
  /// `priority`). Its record is written once it started (``started(_:pid:)``), when it has a
  /// process group to name: a record without one let a later daemon end nothing but the
  /// cgroup, which the next daemon ends whether recorded or not (``LeftoverRuns``). A daemon
  /// killed between the spawn and the record leaves the process held before its exec: its gate
  /// closes with the daemon, and it ends without running the command (``RunProcess``).
  func begin(jobID: String, priority: RunPriority = .background) -> RunScope {
    let runID = Self.newRunID()
    var cgroup: String?
    if let cgroups {
      do {
        cgroup = try cgroups.create(runID: runID)
        if let cgroup {
          RunPriorityControl.configure(
            cgroup: cgroup, for: priority, jobID: jobID, logger: logger)
        }
      } catch {
        logger.warning(
          "run starts without its own cgroup", metadata: ["job": "\(jobID)", "error": "\(error)"])
      }
    }
    let scope = RunScope(runID: runID, jobID: jobID, cgroup: cgroup, leader: nil)
    live.update(scope)
    return scope
  }

  /// Records the started leader of `scope`: process `pid`, held before its exec
  /// (``RunProcess``). It leads a session and a process group of its own (its first step is
  /// `setsid`), which `/proc` may not show yet: both are its pid. Read from `/proc` instead, the
  /// daemon's own group was recorded for a run held before its `setsid`, and a pause sent
  /// SIGSTOP to it.
  func started(_ scope: inout RunScope, pid: pid_t) {
    scope.leader = ProcStat.read(pid: pid)
    scope.leader?.processGroup = pid
    scope.leader?.session = pid
    record(scope)
    live.update(scope)
  }

  /// Ends every remaining process of `scope` (`signal`, then SIGKILL after `grace`), reaps the
  /// ones that came back to the daemon, removes the run's cgroup and record; returns the last
  /// signal it had to send, nil when nothing was left. Not cancellable: it runs to the end even
  /// when the calling task was cancelled.
  @discardableResult
  func end(_ scope: RunScope, signal: Int32 = SIGTERM, grace: Duration) async -> Int32? {
    let sweep = ProcessSweep(scope: scope, live: live)
    var sent: Int32?
    // Usually nothing is left once the leader was reaped: then no task is needed. Otherwise
    // the waits run in a detached task, which the caller's cancellation does not cut short.
    if !sweep.isEmpty() {
      sent = await Task.detached { () -> Int32? in
        sweep.signal(signal)
        if await sweep.waitUntilEmpty(timeout: grace) { return signal }
        sweep.signal(SIGKILL)
        if await !sweep.waitUntilEmpty(timeout: .seconds(5)) {
          logger.warning(
            "processes of a finished run are still there after SIGKILL",
            metadata: ["job": "\(scope.jobID)"])
        }
        return SIGKILL
      }.value
    }
    if let cgroup = scope.cgroup { RunCgroups.remove(cgroup) }
    live.remove(runID: scope.runID)
    registry?.remove(runID: scope.runID)
    return sent
  }

  /// How a run was frozen, which its thaw undoes.
  enum Freeze: String, Sendable {
    /// `1` in its cgroup's `cgroup.freeze`.
    case cgroup = "cgroup.freeze"
    /// SIGSTOP to its process group, the rest of its session and its cgroup's members.
    case stopSignal = "SIGSTOP"
  }

  /// Freezes every process of `scope`: its cgroup's `cgroup.freeze` when it has one and the
  /// write succeeds, else SIGSTOP to its process group, the rest of its session and its
  /// cgroup's members (as a stop reaches them). Returns how, for ``thaw(_:frozenBy:)``.
  func freeze(_ scope: RunScope) -> Freeze {
    if let cgroup = scope.cgroup {
      do {
        try RunCgroups.freeze(cgroup, true)
        return .cgroup
      } catch {
        logger.warning(
          "the run's cgroup did not freeze; its processes are stopped with SIGSTOP",
          metadata: ["job": "\(scope.jobID)", "error": "\(error)"])
      }
    }
    ProcessSweep(scope: scope).signal(SIGSTOP)
    return .stopSignal
  }

  /// Thaws what ``freeze(_:)`` froze, the way it was frozen: a run stopped by SIGSTOP (its
  /// cgroup's freeze had failed) gets SIGCONT even when its cgroup's `cgroup.freeze` takes the
  /// thaw's `0` (writing it, as the thaw did before, left the processes stopped for good); a
  /// cgroup that no longer takes `0` gets SIGCONT as a last resort. Returns how it thawed:
  /// `cgroup.freeze` or `SIGCONT`.
  @discardableResult
  func thaw(_ scope: RunScope, frozenBy freeze: Freeze) -> String {
    if freeze == .cgroup, let cgroup = scope.cgroup {
      do {
        try RunCgroups.freeze(cgroup, false)
        return Freeze.cgroup.rawValue
      } catch {
        logger.warning(
          "the run's cgroup did not thaw; its processes are sent SIGCONT",
          metadata: ["job": "\(scope.jobID)", "error": "\(error)"])
      }
    }
    ProcessSweep(scope: scope).signal(SIGCONT)
    return "SIGCONT"
  }

  /// A random (version 4) UUID, lowercase: from `getrandom` (Swift's default generator), where
  /// Foundation's `UUID()` opens, reads and closes `/dev/urandom` each time.
  static func newRunID() -> String {
    var bytes = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
    let hex = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(36)
    withUnsafeMutableBytes(of: &bytes) { raw in
      raw[6] = (raw[6] & 0x0f) | 0x40
      raw[8] = (raw[8] & 0x3f) | 0x80
      for (index, byte) in raw.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
        text.append(hex[Int(byte >> 4)])
        text.append(hex[Int(byte & 0x0f)])
      }
    }
    return String(decoding: text, as: UTF8.self)
  }

  private func record(_ scope: RunScope) {
    guard let registry else { return }
    let record = RunRecord(
      jobID: scope.jobID, bootID: ProcStat.bootID(), cgroup: scope.cgroup,
      processGroup: scope.leader?.pid, leaderStartTime: scope.leader?.startTime)
    do {
      try registry.save(record, runID: scope.runID)
    } catch {
      logger.warning(
        "cannot record the run; a daemon crash could leave it running",
        metadata: ["job": "\(scope.jobID)", "error": "\(error)"])
    }
  }
}
