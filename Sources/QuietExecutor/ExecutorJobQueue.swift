import Locking

/// A FIFO of jobs with one resident consumer and, for a pool, helper threads started on demand.
///
/// The resident consumer (the pool's resident worker, which the main thread is in the daemon)
/// that finds the queue empty becomes the sleeper and waits in `poll` on ``wakeup``; ``enqueue(_:)`` wakes it, and only when it
/// sleeps, so a busy queue costs no system calls and an idle one blocks its consumer. A job
/// enqueued while the resident consumer is busy starts a helper (up to `helperLimit`); a helper
/// runs jobs until it finds the queue empty and then ends: an idle queue keeps no helper.
final class ExecutorJobQueue: Sendable {
  private struct State {
    var jobs: [UnownedJob] = []
    var head = 0
    /// The resident consumer found the queue empty and has not been handed a wakeup yet.
    var sleeping = false
    /// Helper threads running.
    var helpers = 0
    /// Helper threads at most.
    var helperLimit: Int
    /// Jobs taken so far, by the resident consumer and helpers alike.
    var taken: UInt64 = 0
    /// The last helper to end wakes a sleeping resident consumer (which counts the work the
    /// helpers did: ``takenCount``).
    var wakeWhenHelpersEnd = false

    mutating func popFirst() -> UnownedJob? {
      guard head < jobs.count else { return nil }
      let job = jobs[head]
      head += 1
      taken &+= 1
      if head == jobs.count {
        jobs.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 64 && head * 2 >= jobs.count {
        jobs.removeFirst(head)
        head = 0
      }
      return job
    }
  }

  /// What an ``enqueue(_:)`` must do once the lock is released.
  private enum Follow {
    case nothing, wake, startHelper
  }

  private let state: Lock<State>
  /// Wakes the resident consumer; a timer may share it (``ExecutorTimer``).
  let wakeup = ExecutorWakeup()
  private let startHelper: @Sendable (ExecutorJobQueue) -> Void

  /// A queue whose only consumer is the resident one (the main actor's).
  convenience init() {
    self.init(helperLimit: 0) { _ in }
  }

  /// A queue that calls `startHelper` with itself to start a helper thread (which runs
  /// ``nextForHelper()`` until it returns nil) while fewer than `helperLimit` run.
  init(helperLimit: Int, startHelper: @escaping @Sendable (ExecutorJobQueue) -> Void) {
    state = Lock(State(helperLimit: helperLimit))
    self.startHelper = startHelper
  }

  /// Starts no more than `limit` helper threads from now on (0: the resident consumer runs
  /// every job).
  func limitHelpers(to limit: Int) {
    state.withLock { $0.helperLimit = limit }
  }

  /// Appends `job`: wakes the resident consumer if it sleeps, else starts a helper if allowed.
  func enqueue(_ job: UnownedJob) {
    let follow = state.withLock { state -> Follow in
      state.jobs.append(job)
      if state.sleeping {
        state.sleeping = false
        return .wake
      }
      guard state.helpers < state.helperLimit else { return .nothing }
      state.helpers += 1
      return .startHelper
    }
    switch follow {
    case .nothing: break
    case .wake: wakeup.signal()
    case .startHelper: startHelper(self)
    }
  }

  /// Appends `job` for the calling resident consumer to run itself: no wakeup, no helper.
  func append(_ job: UnownedJob) {
    state.withLock { $0.jobs.append(job) }
  }

  /// The next job; nil if there is none, after which the resident consumer counts as sleeping
  /// and must wait for ``wakeup`` (then call ``stopSleeping()`` if it woke for another reason).
  func nextOrSleep() -> UnownedJob? {
    state.withLock { state in
      if let job = state.popFirst() { return job }
      state.sleeping = true
      return nil
    }
  }

  /// The resident consumer stops sleeping by itself (it woke for a timer); a wakeup already
  /// sent stays in ``wakeup`` and ends its next wait at once, which only costs a round.
  func stopSleeping() {
    state.withLock { $0.sleeping = false }
  }

  /// The next job for a helper; nil when the queue is empty, and then the helper must end.
  func nextForHelper() -> UnownedJob? {
    let (job, wake) = state.withLock { state -> (UnownedJob?, Bool) in
      if let job = state.popFirst() { return (job, false) }
      state.helpers -= 1
      guard state.wakeWhenHelpersEnd, state.helpers == 0, state.sleeping else {
        return (nil, false)
      }
      state.sleeping = false
      return (nil, true)
    }
    if wake { wakeup.signal() }
    return job
  }

  /// Jobs taken so far (wraps around), by the resident consumer and helpers alike.
  var takenCount: UInt64 { state.withLock { $0.taken } }

  /// Makes the last helper to end wake the resident consumer if it sleeps, so that it learns
  /// of the helpers' work (``takenCount``) when they are done.
  func wakeResidentWhenHelpersEnd() {
    state.withLock { $0.wakeWhenHelpersEnd = true }
  }

  /// Helper threads running now (for tests).
  var helperCount: Int { state.withLock { $0.helpers } }
}
