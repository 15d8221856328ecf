import Foundation

/// One run's containment: its id, cgroup (when cgroups are in use) and process group.
struct RunScope: Sendable {
  let runID: String
  let jobID: String
  let cgroup: String?
  var leader: ProcStat?

  /// The argv that starts `argv` inside the run's cgroup: `/bin/sh` writes its own pid into
  /// `cgroup.procs` and then execs the command, so the command is in the cgroup before it can
  /// fork. The path is safe to write through: ``RunCgroups`` verified the cgroup root under the
  /// whole-path rule (nobody else can rename anything on it) and created the run's cgroup
  /// itself. Unchanged without a cgroup.
  func launchArguments(for argv: [String]) -> [String] {
    guard let cgroup else { return argv }
    let script =
      "echo $$ >\"$0\" || { echo \"backgrounder: cannot join cgroup $0\" >&2; exit 125; }; exec \"$@\""
    return ["/bin/sh", "-c", script, cgroup + "/cgroup.procs"] + argv
  }
}
