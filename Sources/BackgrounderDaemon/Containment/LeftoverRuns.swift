import Foundation
import Logging

/// Ends what is left of runs interrupted by the death of the previous daemon (for example
/// `kill -9`), before the runtime starts new attempts.
///
/// A run cgroup is ended with `cgroup.kill`. A process group is ended only when it is provably
/// the recorded one: same boot, and either its leader is alive with the recorded start time, or
/// the leader is gone and every member started after the recorded leader and before this daemon
/// (a pid in use as a process group id is never handed to a new process, so a group whose
/// leader is gone is still the old group as long as a member is left).
package enum LeftoverRuns {
  /// Ends the leftovers recorded for `containment`'s store and removes their records and
  /// cgroups. Returns once they are gone (or after 5 s per run, with a warning).
  package static func terminate(in containment: RunContainment) async {
    guard let registry = containment.registry else { return }
    let logger = containment.logger
    let bootID = ProcStat.bootID()
    let ownStart = ProcStat.read(pid: getpid())?.startTime ?? .max
    var cgroups = Set(containment.cgroups?.existingRuns() ?? [])
    for (runID, record) in registry.all() {
      if let cgroup = record.cgroup { cgroups.insert(cgroup) }
      if record.bootID == bootID, let group = record.processGroup,
        let leaderStart = record.leaderStartTime,
        isRecordedGroup(group, leaderStart: leaderStart, before: ownStart)
      {
        logger.warning(
          "ending the processes of a run interrupted by the previous daemon",
          metadata: ["job": "\(record.jobID)", "pgid": "\(group)"])
        let leader = ProcStat(
          pid: group, state: "?", parent: 0, processGroup: group, session: group,
          startTime: leaderStart)
        await end(RunScope(runID: runID, jobID: record.jobID, cgroup: nil, leader: leader))
      }
      registry.remove(runID: runID)
    }
    for cgroup in cgroups where RunCgroups.isCgroup(cgroup) {
      if !RunCgroups.processes(in: cgroup).isEmpty {
        logger.warning(
          "ending the cgroup of a run interrupted by the previous daemon",
          metadata: ["cgroup": "\(cgroup)"])
      }
      await end(RunScope(runID: "", jobID: "", cgroup: cgroup, leader: nil))
      RunCgroups.remove(cgroup)
    }
  }

  /// Whether process group `group` is the one whose leader started at `leaderStart`.
  static func isRecordedGroup(_ group: pid_t, leaderStart: UInt64, before ownStart: UInt64) -> Bool
  {
    let members = ProcStat.all().filter { $0.processGroup == group }
    guard !members.isEmpty else { return false }
    if let leader = members.first(where: { $0.pid == group }) {
      return leader.startTime == leaderStart
    }
    return members.allSatisfy { $0.startTime >= leaderStart && $0.startTime <= ownStart }
  }

  private static func end(_ scope: RunScope) async {
    let sweep = ProcessSweep(scope: scope)
    sweep.signal(SIGKILL)
    _ = await sweep.waitUntilEmpty(timeout: .seconds(5))
  }
}
