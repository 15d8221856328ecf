import Locking

/// A FIFO of jobs shared by one or more consumer threads. A consumer that finds it empty sleeps
/// in ``ExecutorWakeup/wait()``; ``enqueue(_:)`` wakes exactly one sleeper, and only when one
/// is sleeping, so a busy queue costs no system calls and an idle one blocks every consumer.
final class ExecutorJobQueue: Sendable {
  private struct State {
    var jobs: [UnownedJob] = []
    var head = 0
    /// Consumers that found the queue empty and have not been handed a wakeup yet.
    var sleepers = 0

    mutating func popFirst() -> UnownedJob? {
      guard head < jobs.count else { return nil }
      let job = jobs[head]
      head += 1
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

  private let state = Lock(State())
  private let wakeup = ExecutorWakeup()

  /// Appends `job`, waking one sleeping consumer if there is one.
  func enqueue(_ job: UnownedJob) {
    let wake = state.withLock { state in
      state.jobs.append(job)
      guard state.sleepers > 0 else { return false }
      state.sleepers -= 1
      return true
    }
    if wake { wakeup.signal() }
  }

  /// The next job, blocking while there is none.
  func next() -> UnownedJob {
    while true {
      let job = state.withLock { state -> UnownedJob? in
        if let job = state.popFirst() { return job }
        state.sleepers += 1
        return nil
      }
      if let job { return job }
      wakeup.wait()
    }
  }
}
