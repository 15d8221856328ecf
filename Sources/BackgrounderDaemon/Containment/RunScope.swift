import Foundation

/// One run's containment: its id, cgroup (when cgroups are in use) and process group.
struct RunScope: Sendable {
  let runID: String
  let jobID: String
  let cgroup: String?
  var leader: ProcStat?

  /// The argv that starts `argv` inside the run's cgroup and at its priority: `/bin/sh`
  /// writes its own pid into `cgroup.procs` (so the command is in the cgroup before it can
  /// fork), stops itself until ``RunPriorityControl`` set its priority and continued it, then
  /// execs the command. The path is safe to write through: ``RunCgroups`` verified the cgroup
  /// root under the whole-path rule (nobody else can rename anything on it) and created the
  /// run's cgroup itself. Without a cgroup, only the stop. The shell's own `PWD` is unset
  /// before the exec unless the command's environment has one (`passesPWD`), so the command
  /// sees exactly its environment. A shell that runs as the job's `user` cannot write the
  /// root-owned `cgroup.procs` (`joinsCgroup` false): it only stops, and the daemon moves it
  /// into the cgroup while it is stopped (``RunPriorityControl/release``).
  func launchArguments(
    for argv: [String], passesPWD: Bool = false, joinsCgroup: Bool = true
  ) -> [String] {
    let pause = (passesPWD ? "" : "unset PWD; ") + "kill -STOP $$; exec \"$@\""
    guard let cgroup, joinsCgroup else {
      return ["/bin/sh", "-c", pause, "backgrounder-run"] + argv
    }
    let script =
      "echo $$ >\"$0\" || { echo \"backgrounder: cannot join cgroup $0\" >&2; exit 125; }; "
      + pause
    return ["/bin/sh", "-c", script, cgroup + "/cgroup.procs"] + argv
  }
}
