import CSystemShims
import Foundation
import Synchronization
import SystemCalls

/// The daemon as child subreaper: descendants of a run whose parent died are reparented to the
/// daemon instead of PID 1, so it can end and reap them.
///
/// ``RunProcess`` reaps the run leaders it spawned (through their pidfd), so the daemon never
/// waits for "any child": it reaps only pids it can attribute to a finished run — members of
/// the run's process group other than the leader, and members it saw in the run's cgroup, each
/// checked against its start time before `waitid(P_PID)`.
enum Subreaper {
  /// Makes this process a child subreaper; false (errno in the log) when the kernel refuses.
  static func enable() -> Bool {
    csystem_set_child_subreaper() == 0
  }

  /// Whether this process is a child subreaper (``enable()`` succeeded). Asked of the kernel
  /// until it says yes, which it then says for the life of the process (nothing here unsets
  /// it): a `prctl` per run saved.
  static var isEnabled: Bool {
    if enabledSeen.load(ordering: .relaxed) { return true }
    let enabled = csystem_is_child_subreaper() == 1
    if enabled { enabledSeen.store(true, ordering: .relaxed) }
    return enabled
  }
  private static let enabledSeen = Atomic<Bool>(false)

  /// `/proc/self/task/<pid>/children` of the main thread (its id is the process's: `getpid`
  /// once, not a system call per run).
  private static let childrenPath = "/proc/self/task/\(getpid())/children"

  /// The children of the daemon's main thread (`/proc/self/task/<pid>/children`), nil when
  /// they cannot be read (a kernel without `CONFIG_PROC_CHILDREN`, a list longer than 64 KiB).
  ///
  /// The kernel hands an orphan to the first live thread of its subreaper (`find_new_reaper`),
  /// which is the main thread while the daemon runs; the other threads' lists hold only
  /// processes that thread started itself. So every orphan of a run is in this list.
  static func mainThreadChildren() -> [pid_t]? {
    let limit = 65_536
    guard let bytes = try? readSmallFile(childrenPath, limit: limit),
      bytes.count < limit
    else { return nil }
    var children: [pid_t] = []
    var value: pid_t = 0
    var digits = 0
    for byte in bytes {
      if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 {
        value = value * 10 + pid_t(byte - UInt8(ascii: "0"))
        digits += 1
      } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
        if digits > 0 { children.append(value) }
        value = 0
        digits = 0
      } else {
        return nil
      }
    }
    if digits > 0 { children.append(value) }
    return children
  }

  /// Reaps exited children of ours in process group `group`, never its leader (`pid == group`:
  /// once the original leader is reaped, that pid may lead a new run's ``RunProcess``).
  static func reapGroup(_ group: pid_t) {
    while true {
      let pid = (try? systemCall("waitid") { csystem_peek_exited_in_group(group) }) ?? -1
      guard pid > 0, pid != group else { return }
      _ = try? systemCall("waitid") { csystem_reap(pid) }
    }
  }

  /// Reaps `process` if it is an exited child of ours and still the same process. False only
  /// while it is a child of ours that has not finished exiting.
  static func reap(_ process: ProcStat) -> Bool {
    let exited = (try? systemCall("waitid") { csystem_peek_exited(process.pid) }) ?? -1
    if exited == 0 { return false }
    guard exited == process.pid,
      ProcStat.read(pid: process.pid)?.startTime == process.startTime
    else { return true }
    _ = try? systemCall("waitid") { csystem_reap(process.pid) }
    return true
  }
}
