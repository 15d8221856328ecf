import CSystemShims
import Foundation
import Logging
import SystemCalls

/// Puts a run at its ``RunPriority`` before the job executes, so that no instant of the job
/// runs at the daemon's priority.
///
/// swift-subprocess offers no pre-exec hook on Linux, and setting the priority on the child
/// after spawning leaves a window in which the job already runs at full priority. So the run's
/// wrapper shell (``RunScope/launchArguments(for:)``) joins the run cgroup, whose weights and
/// memory limit were written before the spawn, then stops itself (`kill -STOP $$`); the daemon
/// waits for that stop, sets the nice value (`setpriority`) and the I/O class (`ioprio_set`) of
/// the stopped shell, and continues it (`SIGCONT`); the shell then `exec`s the job, which
/// inherits both.
enum RunPriorityControl {
  /// The I/O priority level of the best-effort class (the kernel's default, 0 highest … 7).
  static let bestEffortLevel: Int32 = 4

  /// Waits until the wrapper shell `pid` stopped itself, sets `priority` on it and continues
  /// it. Returns early when the shell ended instead (it could not join its cgroup). A priority
  /// the daemon may not set (a negative nice without `CAP_SYS_NICE`) is logged; the run goes on
  /// at the priority it has.
  ///
  /// The wait is a `waitid(WSTOPPED | WEXITED | WNOWAIT)` on the shell's pidfd (`descriptor`;
  /// its pid where the kernel gave none) on a short-lived thread: the kernel says when the stop
  /// happened, nothing polls, and nothing is reaped (swift-subprocess reaps the run). A shell
  /// traced by `strace -f` or a debugger is reported stopped too, once its tracer lets the group
  /// stop complete.
  ///
  /// A wrapper that runs as the job's `user` cannot join the root-owned run cgroup itself: with
  /// `joining` (that cgroup's directory) the daemon moves the stopped shell into it before
  /// continuing it, and ends it (SIGKILL) when it cannot, as the shell ends when it cannot join.
  /// `whileStopped` runs on the stopped shell before it continues (the run's `net_prio` cgroup
  /// joined, ``RunShaping``).
  static func release(
    _ pid: pid_t, descriptor: Int32, at priority: RunPriority, jobID: String, logger: Logger,
    joining cgroup: String? = nil, whileStopped: (@Sendable (pid_t) -> Void)? = nil
  ) async {
    do {
      let stopped = try await SystemThread.runBlocking(name: "bg-run-stop") {
        try waitUntilStopped(pid: pid, descriptor: descriptor)
      }
      guard stopped else {
        // Ended (or already reaped): nothing to continue, and its pid may be another's soon.
        logger.warning(
          "the run's wrapper ended before it stopped to have its priority set",
          metadata: ["job": "\(jobID)", "pid": "\(pid)"])
        return
      }
      if let cgroup {
        do {
          try RunCgroups.write("\(pid)", to: cgroup + "/cgroup.procs")
        } catch {
          logger.error(
            "cannot move the run into its cgroup; it is ended",
            metadata: ["job": "\(jobID)", "cgroup": "\(cgroup)", "error": "\(error)"])
          kill(pid, SIGKILL)
          return
        }
      }
      whileStopped?(pid)
      for failure in apply(priority, to: pid) {
        logger.warning(
          "cannot set the run's priority; it runs at the daemon's",
          metadata: ["job": "\(jobID)", "error": "\(failure)"])
      }
    } catch {
      // No thread to wait on: the shell may be stopped; it must go on, without its priority.
      logger.warning(
        "cannot wait for the run's wrapper to stop; it runs without its priority",
        metadata: ["job": "\(jobID)", "error": "\(error)"])
    }
    kill(pid, SIGCONT)
  }

  /// Blocks until process `pid` (pidfd `descriptor`, or -1) stopped or ended, without reaping
  /// it; true when it stopped, false when it ended or is no longer this process's child
  /// (`ECHILD`: swift-subprocess reaped it).
  static func waitUntilStopped(pid: pid_t, descriptor: Int32) throws(SystemCallError) -> Bool {
    var info = siginfo_t()
    // P_PIDFD (3; Linux 5.4): the pidfd names this process even if its pid were reused.
    let (type, id) =
      descriptor >= 0 ? (idtype_t(rawValue: 3), id_t(descriptor)) : (P_PID, id_t(pid))
    do {
      _ = try systemCall("waitid(\(pid))") {
        waitid(type, id, &info, WSTOPPED | WEXITED | WNOWAIT)
      }
    } catch  where error.errno == .noChildProcess {
      return false
    }
    return info.si_code == CLD_STOPPED
  }

  /// Sets the nice value and the I/O class of process `pid`, each on its own; returns what
  /// failed (a negative nice without `CAP_SYS_NICE`: `EACCES`).
  static func apply(_ priority: RunPriority, to pid: pid_t) -> [SystemCallError] {
    var failures: [SystemCallError] = []
    do {
      _ = try systemCall("setpriority(\(pid), \(priority.nice))") {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(pid), Int32(priority.nice))
      }
    } catch {
      failures.append(error)
    }
    let (ioClass, level) = ioPriority(priority.ioClass)
    do {
      _ = try systemCall("ioprio_set(\(pid))") { csystem_ioprio_set(pid, ioClass, level) }
    } catch {
      failures.append(error)
    }
    return failures
  }

  /// The kernel's class number and level for `ioClass` (`IOPRIO_CLASS_IDLE` = 3,
  /// `IOPRIO_CLASS_BE` = 2).
  static func ioPriority(_ ioClass: RunPriority.IOClass) -> (ioClass: Int32, level: Int32) {
    switch ioClass {
    case .idle: (3, 0)
    case .bestEffort: (2, bestEffortLevel)
    }
  }

  /// Writes the weights and the memory limit of `priority` into the run cgroup `directory`,
  /// for each controller the cgroup has (a file that is not there is a controller not
  /// delegated: logged, the run goes on without it).
  static func configure(
    cgroup directory: String, for priority: RunPriority, jobID: String, logger: Logger
  ) {
    var settings = [("cpu.weight", "\(priority.cpuWeight)"), ("io.weight", "\(priority.ioWeight)")]
    if let memoryMax = priority.memoryMax { settings.append(("memory.max", "\(memoryMax)")) }
    for (file, value) in settings {
      do {
        try RunCgroups.write(value, to: directory + "/" + file)
      } catch {
        // A limit the job asked for is worth a warning; the default weights are not.
        logger.log(
          level: file == "memory.max" ? .warning : .debug,
          "run cgroup setting not applied (controller not delegated?)",
          metadata: ["job": "\(jobID)", "file": "\(file)", "error": "\(error)"])
      }
    }
  }

  /// How many processes of cgroup `directory` the kernel's OOM killer ended for exceeding
  /// `memory.max` (`oom_kill` of `memory.events`); 0 without the memory controller.
  static func oomKills(in directory: String) -> Int {
    guard let text = try? String(contentsOfFile: directory + "/memory.events", encoding: .utf8)
    else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("oom_kill ") {
      return Int(line.dropFirst("oom_kill ".count)) ?? 0
    }
    return 0
  }
}
