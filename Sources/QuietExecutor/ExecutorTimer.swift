import Glibc
import Locking

/// Jobs scheduled for later (`Task.sleep`), held until due and then handed to a queue.
///
/// It has no thread of its own: the pool's resident worker, when it finds no job to run, takes
/// the due jobs (``takeDue()``) and waits in `poll` on the wakeup pipe it shares with the job
/// queue, with the time to the earliest deadline as timeout, and with no timeout while nothing
/// is pending: no timer runs, and no system call is made, unless a sleep is actually pending.
///
/// A cancelled sleep disarms its timer. The runtime does not tell an executor that a sleep was
/// cancelled: its cancellation handler resumes the sleeping task at once, and the sleep's own
/// job (which, run late, only frees the sleep's state) stays scheduled until the deadline. So
/// each delayed job remembers the task that scheduled it (the sleeper), and when that task is
/// enqueued again while the job is still held, which only a cancellation does, see
/// ``releaseSleeps(of:)``, the job is handed over at once instead of waking the process later.
final class ExecutorTimer: Sendable {
  /// A point in time on one of the kernel's clocks.
  struct Deadline: Sendable {
    var clock: clockid_t
    var nanoseconds: Int64

    /// Nanoseconds from now until the deadline (negative once passed).
    var remaining: Int64 { nanoseconds - Self.now(clock) }

    /// `delay` after now on `clock`.
    static func after(_ delay: Duration, on clock: clockid_t) -> Deadline {
      let (seconds, attoseconds) = delay.components
      let nanoseconds =
        seconds >= Int64.max / 1_000_000_000
        ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
      let (sum, overflow) = Self.now(clock).addingReportingOverflow(nanoseconds)
      return Deadline(clock: clock, nanoseconds: overflow ? .max : sum)
    }

    static func now(_ clock: clockid_t) -> Int64 {
      var time = timespec()
      clock_gettime(clock, &time)
      return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
  }

  /// The identity of a job or task: the address of the runtime's job object (a task is a job).
  struct JobIdentity: Hashable, Sendable {
    let address: UInt

    init(_ job: UnownedJob) { address = unsafeBitCast(job, to: UInt.self) }

    init(_ task: UnsafeCurrentTask) { address = unsafeBitCast(task, to: UInt.self) }
  }

  private struct Pending {
    var deadline: Deadline
    var job: UnownedJob
    /// The task that was running when the job was scheduled.
    var sleeper: JobIdentity?
  }

  private struct State {
    var pending: [Pending] = []
    /// How many entries of `pending` each sleeper has (normally one).
    var sleepers: [JobIdentity: Int] = [:]
    /// The resident worker is in `poll`, to wake by itself at this `CLOCK_MONOTONIC` time (`nil`:
    /// never); `waiting` is false while it runs or once a wakeup was sent.
    var waiting = false
    var wakesAt: Int64?

    /// The `CLOCK_MONOTONIC` time at which the earliest pending job is due, nil if none is.
    var earliestWake: Int64? {
      pending.lazy.map { Deadline.now(CLOCK_MONOTONIC) + max(0, $0.deadline.remaining) }.min()
    }

    /// Takes the resident worker out of `poll` if it would wake later than `wakesAt` requires;
    /// returns whether a wakeup must be sent.
    mutating func needsWakeup(toWakeBy wakesAt: Int64) -> Bool {
      guard waiting, self.wakesAt.map({ wakesAt < $0 }) ?? true else { return false }
      waiting = false
      return true
    }
  }

  private let target: ExecutorJobQueue
  private let state = Lock(State())

  /// Cancelled sleeps go to `target`; the timer wakes `target`'s resident worker through the
  /// queue's wakeup.
  init(target: ExecutorJobQueue) {
    self.target = target
  }

  private var wakeup: ExecutorWakeup { target.wakeup }

  /// Holds `job` until `deadline`. `sleeper` is the task scheduling it (the current task).
  func enqueue(_ job: UnownedJob, at deadline: Deadline, sleeper: JobIdentity?) {
    let wakesAt = Deadline.now(CLOCK_MONOTONIC) + max(0, deadline.remaining)
    let wake = state.withLock { state in
      state.pending.append(Pending(deadline: deadline, job: job, sleeper: sleeper))
      if let sleeper { state.sleepers[sleeper, default: 0] += 1 }
      return state.needsWakeup(toWakeBy: wakesAt)
    }
    if wake { wakeup.signal() }
  }

  /// Called with every job about to be enqueued for running: if it is a task whose sleep is
  /// still held, the sleep was cancelled (a sleeping task is otherwise only resumed by its
  /// sleep's job, which is then no longer held). Hands those sleeps' jobs to the queue now
  /// (they only free the sleep's state) and makes the resident worker stop waiting for them.
  func releaseSleeps(of job: UnownedJob) {
    let identity = JobIdentity(job)
    let (released, wake) = state.withLock { state -> ([UnownedJob], Bool) in
      guard state.sleepers.removeValue(forKey: identity) != nil else { return ([], false) }
      var released: [UnownedJob] = []
      state.pending.removeAll { pending in
        guard pending.sleeper == identity else { return false }
        released.append(pending.job)
        return true
      }
      // The worker in `poll` re-arms for the new earliest deadline (or none) right away, so
      // that it does not wake at the cancelled one.
      guard state.waiting, let wakesAt = state.wakesAt else { return (released, false) }
      if let next = state.earliestWake, next <= wakesAt + 1_000_000 { return (released, false) }
      state.waiting = false
      return (released, true)
    }
    for sleep in released { target.enqueue(sleep) }
    if wake { wakeup.signal() }
  }

  /// Whether the resident worker is waiting for a deadline at all (for tests).
  var isArmed: Bool { state.withLock { $0.waiting && $0.wakesAt != nil } }

  /// The number of jobs held (for tests).
  var pendingCount: Int { state.withLock { $0.pending.count } }

  /// The resident worker stopped waiting (it left `poll`).
  func stopWaiting() {
    state.withLock { $0.waiting = false }
  }

  /// Removes the jobs that are due (earliest first); if there are none, marks the resident
  /// worker as waiting and returns the `poll` timeout in milliseconds (-1: none pending).
  func takeDue() -> ([UnownedJob], Int32) {
    state.withLock { state in
      var due: [(Int64, UnownedJob)] = []
      var earliest: Int64?
      var sleepers = state.sleepers
      state.pending.removeAll { pending in
        let remaining = pending.deadline.remaining
        if remaining <= 0 {
          due.append((remaining, pending.job))
          if let sleeper = pending.sleeper {
            sleepers[sleeper] = sleepers[sleeper].flatMap { $0 > 1 ? $0 - 1 : nil }
          }
          return true
        }
        earliest = min(earliest ?? .max, remaining)
        return false
      }
      state.sleepers = sleepers
      guard due.isEmpty else { return (due.sorted { $0.0 < $1.0 }.map(\.1), 0) }
      state.waiting = true
      state.wakesAt = earliest.map { Deadline.now(CLOCK_MONOTONIC) + $0 }
      guard let earliest else { return ([], -1) }
      let milliseconds = (earliest + 999_999) / 1_000_000
      return ([], Int32(clamping: milliseconds))
    }
  }
}
