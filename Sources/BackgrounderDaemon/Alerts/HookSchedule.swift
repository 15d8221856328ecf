import Backgrounder
import Foundation

/// Which `on-failure`/`on-stale` hooks run when, as a value: the decisions of ``AlertWatch``'s
/// hook driver, which only starts the processes, sleeps until the deadlines on its clock and
/// reports the ends back. Nothing here has a clock of its own (`now` is passed in).
///
/// - Per job at most one hook runs. A job's next event waits (one pending hook per job and kind,
///   `failure` or `stale`); later events of that kind are coalesced into the waiting one, which
///   then runs with the newest event's reason and ``AlertHooks/Call/coalesced`` counting the
///   events it stands for besides that one (`BACKGROUNDER_COALESCED`).
/// - Different jobs' hooks run concurrently, up to ``Limits/concurrent``; the others wait in
///   arrival order.
/// - At most ``Limits/pending`` hooks wait in all; one more is dropped (and logged).
/// - Each hook runs until ``Limits/budget`` after its start at most.
/// - ``stop()`` (the daemon's shutdown) cancels every waiting hook, and names the running ones
///   to stop; nothing starts afterwards.
struct HookSchedule: Sendable, Equatable {
  /// The bounds of the schedule.
  struct Limits: Sendable, Equatable {
    /// Hooks running at once (of different jobs).
    var concurrent = 4
    /// Hooks waiting at once, all jobs together.
    var pending = 64
    /// How long a hook may run before it is stopped.
    var budget: Duration = .seconds(300)
  }

  /// A hook to start now, and when it must be stopped if still running.
  struct Start: Sendable, Equatable {
    var call: AlertHooks.Call
    var deadline: WallInstant
  }

  /// What became of a submitted hook.
  enum Submission: Sendable, Equatable {
    /// It starts now.
    case start(Start)
    /// It waits for its job's running hook or for a free slot.
    case queued
    /// It was merged into the waiting hook of its job and kind, which now stands for this
    /// many events besides the newest.
    case coalesced(Int)
    /// Too many hooks wait: it is dropped.
    case dropped
    /// The daemon is stopping: nothing starts any more.
    case stopping
  }

  /// What ``stop()`` did.
  struct Stop: Sendable, Equatable {
    /// How many waiting hooks were cancelled.
    var cancelled: Int
    /// The jobs whose running hooks must be stopped.
    var running: [TaskId]
  }

  private struct Key: Hashable, Sendable {
    var job: TaskId
    var result: String
  }

  let limits: Limits
  /// The running hooks: their jobs and deadlines.
  private(set) var running: [TaskId: WallInstant] = [:]
  /// The waiting hooks, in arrival order (one per job and kind).
  private var waiting: [Key] = []
  private var calls: [Key: AlertHooks.Call] = [:]
  /// Whether ``stop()`` was called.
  private(set) var isStopping = false

  init(limits: Limits = Limits()) {
    self.limits = limits
  }

  /// How many hooks wait.
  var pendingCount: Int { waiting.count }

  /// The waiting hook of `job` for `result` (`failure` or `stale`), if any.
  func pending(_ job: TaskId, _ result: String) -> AlertHooks.Call? {
    calls[Key(job: job, result: result)]
  }

  /// Takes `call` at `now`: starts it, queues it, coalesces it or drops it.
  mutating func submit(_ call: AlertHooks.Call, now: WallInstant) -> Submission {
    guard !isStopping else { return .stopping }
    let key = Key(job: call.job, result: call.result)
    if var waiting = calls[key] {
      let coalesced = waiting.coalesced + 1 + call.coalesced
      waiting = call
      waiting.coalesced = coalesced
      calls[key] = waiting
      return .coalesced(coalesced)
    }
    let jobWaits = self.waiting.contains { $0.job == call.job }
    if running[call.job] == nil, !jobWaits, running.count < limits.concurrent {
      return .start(begin(call, now: now))
    }
    guard waiting.count < limits.pending else { return .dropped }
    waiting.append(key)
    calls[key] = call
    return .queued
  }

  /// `job`'s hook ended at `now`: the hooks that start in its place, oldest first.
  mutating func finished(_ job: TaskId, now: WallInstant) -> [Start] {
    running[job] = nil
    guard !isStopping else { return [] }
    var starts: [Start] = []
    var index = 0
    while index < waiting.count, running.count < limits.concurrent {
      let key = waiting[index]
      guard running[key.job] == nil, let call = calls.removeValue(forKey: key) else {
        index += 1
        continue
      }
      waiting.remove(at: index)
      starts.append(begin(call, now: now))
    }
    return starts
  }

  /// The daemon stops: every waiting hook is cancelled, the running ones are to be stopped,
  /// nothing starts afterwards.
  mutating func stop() -> Stop {
    isStopping = true
    let cancelled = waiting.count
    waiting = []
    calls = [:]
    return Stop(
      cancelled: cancelled, running: running.keys.sorted { $0.rawValue < $1.rawValue })
  }

  private mutating func begin(_ call: AlertHooks.Call, now: WallInstant) -> Start {
    let deadline = now.advanced(by: limits.budget)
    running[call.job] = deadline
    return Start(call: call, deadline: deadline)
  }
}
