import Glibc
import Synchronization

/// Jobs scheduled for later (`Task.sleep`), held until due and then handed to a queue.
///
/// A thread, started with the first delayed job, waits in `poll` on a wakeup pipe with the time
/// to the earliest deadline as timeout, and with no timeout while nothing is pending: no timer
/// runs, and no system call is made, unless a sleep is actually pending.
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

  private struct Pending {
    var deadline: Deadline
    var job: UnownedJob
  }

  private struct State {
    var pending: [Pending] = []
    var started = false
    /// The timer thread is in `poll`, to wake by itself at this `CLOCK_MONOTONIC` time (`nil`:
    /// never); `waiting` is false while it runs or once a wakeup was sent.
    var waiting = false
    var wakesAt: Int64?
  }

  private let target: ExecutorJobQueue
  private let state = Mutex(State())
  private let wakeup = ExecutorWakeup()

  /// Due jobs go to `target`.
  init(target: ExecutorJobQueue) {
    self.target = target
  }

  /// Holds `job` until `deadline`.
  func enqueue(_ job: UnownedJob, at deadline: Deadline) {
    let wakesAt = Deadline.now(CLOCK_MONOTONIC) + max(0, deadline.remaining)
    let (start, wake) = state.withLock { state in
      state.pending.append(Pending(deadline: deadline, job: job))
      defer { state.started = true }
      guard state.waiting, state.wakesAt.map({ wakesAt < $0 }) ?? true else {
        return (!state.started, false)
      }
      state.waiting = false
      return (!state.started, true)
    }
    if wake { wakeup.signal() }
    if start { ExecutorThread.start(name: "bg-exec-timer") { self.run() } }
  }

  private func run() -> Never {
    while true {
      let (due, timeout) = takeDue()
      guard due.isEmpty else {
        for job in due { target.enqueue(job) }
        continue
      }
      var descriptor = pollfd(fd: wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, timeout)
      state.withLock { $0.waiting = false }
      if ready > 0 { wakeup.consume(upTo: 1) }
    }
  }

  /// Removes the jobs that are due (earliest first); if there are none, marks the thread as
  /// waiting and returns the `poll` timeout in milliseconds (-1: none pending).
  private func takeDue() -> ([UnownedJob], Int32) {
    state.withLock { state in
      var due: [(Int64, UnownedJob)] = []
      var earliest: Int64?
      state.pending.removeAll { pending in
        let remaining = pending.deadline.remaining
        if remaining <= 0 {
          due.append((remaining, pending.job))
          return true
        }
        earliest = min(earliest ?? .max, remaining)
        return false
      }
      guard due.isEmpty else { return (due.sorted { $0.0 < $1.0 }.map(\.1), 0) }
      state.waiting = true
      state.wakesAt = earliest.map { Deadline.now(CLOCK_MONOTONIC) + $0 }
      guard let earliest else { return ([], -1) }
      let milliseconds = (earliest + 999_999) / 1_000_000
      return ([], Int32(clamping: milliseconds))
    }
  }
}
