import CSystemShims
import Glibc
import Locking
import SystemCalls

/// A FIFO of jobs with one resident consumer and, for a pool, helper threads started on demand.
///
/// The resident consumer (the pool's resident worker, which the main thread is in the daemon)
/// that finds the queue empty becomes the sleeper and waits in `poll` on ``wakeup``; ``enqueue(_:)`` wakes it, and only when it
/// sleeps, so a busy queue costs no system calls and an idle one blocks its consumer. A job
/// enqueued while the resident consumer is busy wakes a parked helper, else starts one (up to
/// `helperLimit`); a helper runs jobs until it finds the queue empty and then ends, or, once
/// ``parkIdleHelpers()`` was called (a long-running process), parks until a job or
/// ``retireParkedHelpers()`` (its quiet action) wakes it: a burst of runs then starts no
/// thread per run (issue #35: 18 helper starts per job run before), and an idle queue keeps no
/// helper after its quiet action.
///
/// With ``handOffLate(after:)`` (the daemon's pool), a job enqueued while the resident consumer
/// is busy waits for it instead — its current job is almost always a few microseconds of work,
/// and handing each such job to a helper thread cost two context switches (issue #35: 20 % of
/// the daemon's CPU per run) — and a watch (a `timerfd` and a thread blocked on it, both made at
/// the first such wait) wakes a helper only when no job was taken for that long while jobs
/// waited: a job that blocks still does not hold the others back for longer than that.
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
    /// The last helper to end (or park) wakes a sleeping resident consumer (which counts the
    /// work the helpers did: ``takenCount``).
    var wakeWhenHelpersEnd = false
    /// Helpers park instead of ending when they find the queue empty.
    var parkHelpers = false
    /// Helpers parked (counted in ``helpers`` too), each waiting for one post of the semaphore.
    var parked = 0
    /// Helpers told to end (``retireParkedHelpers()``) that have not yet.
    var retiring = 0
    /// How long jobs may wait for a busy resident consumer before a helper takes them
    /// (nanoseconds; nil: a helper is woken at once, ``handOffLate(after:)``).
    var handOffDelay: Int64?
    /// The watch's timer is armed (for jobs waiting behind a busy resident consumer).
    var watchArmed = false
    /// ``taken`` when the watch was armed: unchanged at its expiry, nobody took a job meanwhile.
    var takenAtArm: UInt64 = 0

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
    case nothing, wake, unpark, startHelper, watch
  }

  /// What a helper that asked for a job does next.
  private enum HelperStep {
    case run(UnownedJob)
    case park(wakeResident: Bool)
    case end(wakeResident: Bool)
  }

  private let state: Lock<State>
  /// Wakes the resident consumer; a timer may share it (``ExecutorTimer``).
  let wakeup = ExecutorWakeup()
  private let startHelper: @Sendable (ExecutorJobQueue) -> Void
  /// Where parked helpers wait: one post per helper woken (``State/parked`` counts them). A
  /// POSIX semaphore is safe to share between threads (and ThreadSanitizer sees its order).
  nonisolated(unsafe) private let parking: UnsafeMutablePointer<sem_t>
  /// The watch's `timerfd` (``handOffLate(after:)``), made at the first wait behind a busy
  /// resident consumer, with the thread that reads it; -1 before.
  private let watch = Lock<Int32>(-1)

  /// A queue whose only consumer is the resident one (the main actor's).
  convenience init() {
    self.init(helperLimit: 0) { _ in }
  }

  /// A queue that calls `startHelper` with itself to start a helper thread (which runs
  /// ``nextForHelper()`` until it returns nil) while fewer than `helperLimit` run.
  init(helperLimit: Int, startHelper: @escaping @Sendable (ExecutorJobQueue) -> Void) {
    state = Lock(State(helperLimit: helperLimit))
    self.startHelper = startHelper
    parking = .allocate(capacity: 1)
    sem_init(parking, 0, 0)
  }

  deinit {
    sem_destroy(parking)
    parking.deallocate()
  }

  /// Makes helpers that find the queue empty park instead of ending (for a process whose
  /// resident consumer runs a quiet action, which retires them: ``retireParkedHelpers()``).
  func parkIdleHelpers() {
    state.withLock { $0.parkHelpers = true }
  }

  /// Ends the helpers parked now (each after the job it may find first).
  func retireParkedHelpers() {
    let count = state.withLock { state in
      let count = state.parked
      state.parked = 0
      state.retiring += count
      return count
    }
    for _ in 0..<count { sem_post(parking) }
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
      if state.handOffDelay != nil, state.helperLimit > 0 {
        // Waits for the busy resident consumer; the watch hands it to a helper if it waits long.
        guard !state.watchArmed else { return .nothing }
        state.watchArmed = true
        state.takenAtArm = state.taken
        return .watch
      }
      return Self.helperFor(&state)
    }
    switch follow {
    case .nothing: break
    case .wake: wakeup.signal()
    case .unpark: sem_post(parking)
    case .startHelper: startHelper(self)
    case .watch: armWatch()
    }
  }

  /// Wakes a parked helper, else starts one if allowed (under the lock).
  private static func helperFor(_ state: inout State) -> Follow {
    if state.parked > 0 {
      state.parked -= 1
      return .unpark
    }
    guard state.helpers < state.helperLimit else { return .nothing }
    state.helpers += 1
    return .startHelper
  }

  /// From now on a job enqueued while the resident consumer is busy waits for it, and a helper
  /// takes jobs only when none was taken for `delay` while they waited (a job blocks).
  func handOffLate(after delay: Duration) {
    let (seconds, attoseconds) = delay.components
    state.withLock { $0.handOffDelay = seconds * 1_000_000_000 + attoseconds / 1_000_000_000 }
  }

  /// Arms the watch's timer for the delay from now, making the timer and its thread first if
  /// they are not there yet. The timer is set under ``watch``'s lock, and so is every other
  /// setting of it: an arming is never undone by an earlier disarming that ran late.
  private func armWatch() {
    let delay = state.withLock { $0.handOffDelay } ?? 0
    watch.withLock { descriptor in
      if descriptor < 0 {
        descriptor = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC))
        guard descriptor >= 0 else {
          fatalError("executor: \(SystemCallError.current("timerfd_create"))")
        }
        let timer = descriptor
        ExecutorThreads.start(name: "bg-exec-watch") { [self] in watchLoop(timer) }
      }
      Self.setTimer(descriptor, after: delay)
    }
  }

  /// Disarms the watch's timer when it is armed: the resident consumer found the queue empty.
  private func disarmWatchIfArmed() {
    let armed = state.withLock { state in
      let armed = state.watchArmed
      state.watchArmed = false
      return armed
    }
    guard armed else { return }
    watch.withLock { descriptor in
      // Armed again meanwhile (a job enqueued since): leave it.
      guard descriptor >= 0, !state.withLock({ $0.watchArmed }) else { return }
      Self.setTimer(descriptor, after: 0)
    }
  }

  /// Sets `timer` to expire once after `nanoseconds` (0: disarmed).
  private static func setTimer(_ timer: Int32, after nanoseconds: Int64) {
    var value = itimerspec()
    value.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
    value.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
    _ = timerfd_settime(timer, 0, &value, nil)
  }

  /// The watch's thread: at each expiry, jobs still waiting while nobody took one since the
  /// timer was armed go to a helper (woken or started; the queue is checked again after the
  /// delay); jobs still waiting while jobs were taken wait on, the timer armed again; no job
  /// waiting: the watch rests until the next wait.
  private func watchLoop(_ timer: Int32) -> Never {
    while true {
      var expirations: UInt64 = 0
      guard read(timer, &expirations, 8) == 8 else { continue }  // EINTR
      let follow = state.withLock { state -> Follow in
        guard state.watchArmed else { return .nothing }
        guard state.head < state.jobs.count else {
          state.watchArmed = false
          return .nothing
        }
        let stuck = state.taken == state.takenAtArm
        state.takenAtArm = state.taken
        // Every helper busy already (the limit): nothing to wake, the queue is looked at again.
        return stuck ? Self.helperFor(&state) : .watch
      }
      switch follow {
      case .unpark: sem_post(parking)
      case .startHelper: startHelper(self)
      default: break
      }
      // Jobs still wait (the watch stays armed): look again after the delay.
      watch.withLock { descriptor in
        let (armed, delay) = state.withLock { ($0.watchArmed, $0.handOffDelay ?? 0) }
        if armed { Self.setTimer(descriptor, after: delay) }
      }
    }
  }

  /// Appends `job` for the calling resident consumer to run itself: no wakeup, no helper.
  func append(_ job: UnownedJob) {
    state.withLock { $0.jobs.append(job) }
  }

  /// The next job; nil if there is none, after which the resident consumer counts as sleeping
  /// and must wait for ``wakeup`` (then call ``stopSleeping()`` if it woke for another reason).
  func nextOrSleep() -> UnownedJob? {
    let job = state.withLock { state -> UnownedJob? in
      if let job = state.popFirst() { return job }
      state.sleeping = true
      return nil
    }
    if job == nil { disarmWatchIfArmed() }
    return job
  }

  /// The resident consumer stops sleeping by itself (it woke for a timer); a wakeup already
  /// sent stays in ``wakeup`` and ends its next wait at once, which only costs a round.
  func stopSleeping() {
    state.withLock { $0.sleeping = false }
  }

  /// The next job for a helper; nil when the helper must end (the queue is empty and helpers
  /// do not park, or it was retired). A parked helper waits here.
  func nextForHelper() -> UnownedJob? {
    while true {
      let step = state.withLock { state -> HelperStep in
        if let job = state.popFirst() { return .run(job) }
        // The last helper at work falls idle: a sleeping resident consumer learns of the work.
        let wake = state.wakeWhenHelpersEnd && state.sleeping && state.helpers - state.parked == 1
        if wake { state.sleeping = false }
        if state.retiring > 0 {
          state.retiring -= 1
          state.helpers -= 1
          return .end(wakeResident: wake)
        }
        if state.parkHelpers {
          state.parked += 1
          return .park(wakeResident: wake)
        }
        state.helpers -= 1
        return .end(wakeResident: wake)
      }
      switch step {
      case .run(let job):
        return job
      case .park(let wakeResident):
        if wakeResident { wakeup.signal() }
        while sem_wait(parking) != 0 {}  // EINTR
      case .end(let wakeResident):
        if wakeResident { wakeup.signal() }
        return nil
      }
    }
  }

  /// Jobs taken so far (wraps around), by the resident consumer and helpers alike.
  var takenCount: UInt64 { state.withLock { $0.taken } }

  /// Makes the last helper to end wake the resident consumer if it sleeps, so that it learns
  /// of the helpers' work (``takenCount``) when they are done.
  func wakeResidentWhenHelpersEnd() {
    state.withLock { $0.wakeWhenHelpersEnd = true }
  }

  /// Helper threads running now, parked ones included (for tests).
  var helperCount: Int { state.withLock { $0.helpers } }

  /// Helper threads parked now (for tests).
  var parkedCount: Int { state.withLock { $0.parked } }
}
