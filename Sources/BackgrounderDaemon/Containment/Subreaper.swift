import CSystemShims
import Foundation
import SystemCalls

/// The daemon as child subreaper: descendants of a run whose parent died are reparented to the
/// daemon instead of PID 1, so it can end and reap them.
///
/// swift-subprocess reaps the run leaders it spawned (through their pidfd), so the daemon never
/// waits for "any child": it reaps only pids it can attribute to a finished run — members of
/// the run's process group other than the leader, and members it saw in the run's cgroup, each
/// checked against its start time before `waitid(P_PID)`.
enum Subreaper {
  /// Makes this process a child subreaper; false (errno in the log) when the kernel refuses.
  static func enable() -> Bool {
    csystem_set_child_subreaper() == 0
  }

  /// Reaps exited children of ours in process group `group`, never its leader (`pid == group`:
  /// once the original leader is reaped, that pid may lead a new run owned by swift-subprocess).
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
