import CSystemShims
import Foundation
import Locking
import SystemCalls

/// The processes left of one run: the members of its session (its process group and any group
/// a member made with `setpgid`) and of its cgroup. Signals them, waits for them to be gone,
/// and reaps those reparented to the daemon. Only `setsid` leaves the session; the run's cgroup
/// still holds such a process, when there is one.
final class ProcessSweep: Sendable {
  private let group: pid_t?
  /// The start time of the group's leader: a live process with the group's pid and another
  /// start time leads a new group that reuses the id, which is never signalled.
  private let leaderStartTime: UInt64
  private let cgroup: String?
  /// Cgroup members seen so far, so that they can be reaped once they left the cgroup.
  private let seen = Lock<[pid_t: ProcStat]>([:])
  /// The runs going now: their leaders are the children of the daemon that are not orphans
  /// (``sessionIsGone(_:)``). Nil: every check reads every process's stat.
  private let live: LiveRuns?

  init(scope: RunScope, live: LiveRuns? = nil) {
    group = scope.leader?.processGroup
    leaderStartTime = scope.leader?.startTime ?? 0
    cgroup = scope.cgroup
    self.live = live
  }

  /// The run's process group, unless its id now belongs to a new group.
  private var ownGroup: pid_t? {
    guard let group else { return nil }
    if let holder = ProcStat.read(pid: group), holder.startTime != leaderStartTime { return nil }
    return group
  }

  /// Whether nothing of the run is left; reaps what exited meanwhile.
  func isEmpty() -> Bool {
    var empty = true
    if let group = ownGroup {
      Subreaper.reapGroup(group)
      if sessionIsGone(group) { return isCgroupEmpty() }
      // One scan of /proc for both questions (each reads every process's stat).
      var processes = ProcStat.all()
      var reaped: Set<pid_t> = []
      for member in Self.othersInSession(group, among: processes) where member.state == "Z" {
        if Subreaper.reap(member) { reaped.insert(member.pid) }
      }
      processes.removeAll { reaped.contains($0.pid) }
      if Self.hasLiveMember(group, among: processes) { empty = false }
    }
    return isCgroupEmpty() && empty
  }

  /// Whether the kernel shows that nothing is left of session `group`, with no scan of
  /// `/proc`: its leader was reaped, its process group is empty (`kill(-group, 0)`: ESRCH) and
  /// the daemon adopted no orphan — every child of its main thread leads a run going now.
  ///
  /// Why that suffices: every member of the session descends from its leader. The daemon is a
  /// child subreaper, so once the leader is gone, each descendant still there has an ancestor
  /// (or is itself) an orphan adopted by the daemon's main thread (``Subreaper/mainThreadChildren()``).
  /// A run leader's descendants are in its own session or in one they made, never in this one
  /// (a session id is not reused while it has a member). False (the caller scans `/proc`)
  /// whenever that cannot be shown: the daemon is not a subreaper, the list cannot be read, a
  /// child is not a known leader (an orphan, or a run starting right now).
  private func sessionIsGone(_ group: pid_t) -> Bool {
    guard let live, Self.groupIsGone(group), Subreaper.isEnabled else { return false }
    // Not while a run's leader is spawned and not registered yet (``LiveRuns/registering(_:)``).
    return live.registering {
      guard let children = Subreaper.mainThreadChildren() else { return false }
      if children.isEmpty { return true }
      let leaders = live.leaders()
      return children.allSatisfy { $0 != group && leaders.contains($0) }
    }
  }

  /// Whether no process is left in process group `group` (`kill(-group, 0)` fails with
  /// `ESRCH`).
  private static func groupIsGone(_ group: pid_t) -> Bool {
    do {
      _ = try systemCall("kill") { kill(-group, 0) }
      return false
    } catch {
      return error.errno == .noSuchProcess
    }
  }

  /// Whether the run's cgroup (when it has one) is empty; reaps the members that left it.
  private func isCgroupEmpty() -> Bool {
    var empty = true
    if let cgroup {
      let members = RunCgroups.processes(in: cgroup)
      if !members.isEmpty { empty = false }
      let gone = seen.withLock { seen in
        for pid in members where seen[pid] == nil { seen[pid] = ProcStat.read(pid: pid) }
        return seen.values.filter { !members.contains($0.pid) }
      }
      // A member that left the cgroup is exiting; keep it until it is reaped or not ours.
      let unreaped = gone.filter { !Subreaper.reap($0) }
      seen.withLock { seen in
        for process in gone where !unreaped.contains(process) { seen[process.pid] = nil }
      }
      if !unreaped.isEmpty { empty = false }
    }
    return empty
  }

  /// Whether a member of `group` (the run's session: its leader's session id is its group id)
  /// has not exited yet or waits to be reaped by the daemon (zombies with another parent count
  /// as gone: their parent reaps them).
  private static func hasLiveMember(_ group: pid_t, among processes: [ProcStat]) -> Bool {
    let daemon = getpid()
    return processes.contains {
      ($0.processGroup == group || $0.session == group)
        && ($0.state != "Z" || ($0.parent == daemon && $0.pid != group))
    }
  }

  /// The members of session `session` outside its first process group (they called
  /// `setpgid`), so that `kill(-group)` does not reach them.
  private static func othersInSession(
    _ session: pid_t, among processes: [ProcStat] = ProcStat.all()
  ) -> [ProcStat] {
    processes.filter { $0.session == session && $0.processGroup != session }
  }

  /// Sends `signal` to the run's process group, to the other members of its session and to
  /// every cgroup member (`cgroup.kill` for SIGKILL). A session member is signalled through a
  /// pidfd opened before its stat is read again: a pid reused meanwhile is never hit.
  func signal(_ signal: Int32) {
    if let group = ownGroup {
      kill(-group, signal)
      for member in Self.othersInSession(group) where member.state != "Z" {
        Self.signal(member, signal, session: group)
      }
    }
    guard let cgroup else { return }
    if signal == SIGKILL {
      RunCgroups.kill(cgroup)
    } else {
      for pid in RunCgroups.processes(in: cgroup) { kill(pid, signal) }
    }
  }

  private static func signal(_ process: ProcStat, _ signal: Int32, session: pid_t) {
    let pidfd = csystem_pidfd_open(process.pid)
    guard pidfd >= 0 else { return }
    defer { close(pidfd) }
    guard let now = ProcStat.read(pid: process.pid), now.startTime == process.startTime,
      now.session == session
    else { return }
    _ = csystem_pidfd_send_signal(pidfd, signal)
  }

  /// Polls (every 5 ms at first, backing off to 200 ms) until nothing is left or `timeout`
  /// passed; true when nothing is left.
  func waitUntilEmpty(timeout: Duration) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    var interval = Duration.milliseconds(5)
    while !isEmpty() {
      let now = clock.now
      guard now < deadline else { return false }
      try? await clock.sleep(for: min(interval, now.duration(to: deadline)))
      interval = min(interval * 2, .milliseconds(200))
    }
    return true
  }
}
