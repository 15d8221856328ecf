import CSystemShims
import Foundation
import Logging
import SystemCalls

/// Puts a run at its ``RunPriority`` and in its cgroups before the job executes, so that no
/// instant of the job runs at the daemon's priority or outside its cgroup.
///
/// The run's process is started held before its exec (``RunProcess``): the daemon moves it into
/// the run cgroup (whose weights and memory limit were written before the spawn), runs
/// `whileHeld` on it (its `net_prio` cgroup, ``RunShaping``), sets its nice value
/// (`setpriority`) and I/O class (`ioprio_set`), then lets it exec; the command inherits all of
/// it. (Before, a wrapper shell joined the cgroup, stopped itself and was continued once a
/// thread saw it stop: two execs and a thread hand-off per run.)
enum RunPriorityControl {
  /// The I/O priority level of the best-effort class (the kernel's default, 0 highest … 7).
  static let bestEffortLevel: Int32 = 4

  /// Prepares the held process `pid` (``RunProcess``): into `cgroup` (the run cgroup's
  /// directory) when it has one, `whileHeld`, then `priority`. Returns false when it could not
  /// be moved into its cgroup: it is then killed (SIGKILL) and must not be released. A priority
  /// the daemon may not set (a negative nice without `CAP_SYS_NICE`) is logged; the run goes on
  /// at the priority it has.
  static func prepare(
    _ pid: pid_t, at priority: RunPriority, jobID: String, logger: Logger,
    joining cgroup: String?, whileHeld: (@Sendable (pid_t) -> Void)? = nil
  ) -> Bool {
    if let cgroup {
      do {
        try RunCgroups.write("\(pid)", to: cgroup + "/cgroup.procs")
      } catch {
        logger.error(
          "cannot move the run into its cgroup; it is ended",
          metadata: ["job": "\(jobID)", "cgroup": "\(cgroup)", "error": "\(error)"])
        kill(pid, SIGKILL)
        return false
      }
    }
    whileHeld?(pid)
    for failure in apply(priority, to: pid) {
      logger.warning(
        "cannot set the run's priority; it runs at the daemon's",
        metadata: ["job": "\(jobID)", "error": "\(failure)"])
    }
    return true
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
