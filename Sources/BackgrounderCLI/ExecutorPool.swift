import Glibc
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

/// The global executor: a fixed set of worker threads sharing one ``ExecutorJobQueue``, plus
/// an ``ExecutorTimer`` for delayed jobs (`Task.sleep`). Idle workers block in `read`.
final class ExecutorPool: TaskExecutor, SchedulingExecutor, Sendable {
  private let queue = ExecutorJobQueue()
  private let timer: ExecutorTimer

  /// The generic executor reference (`SerialExecutorRef::generic()`: identity and witness
  /// table both null), which the runtime also passes when it runs global jobs itself.
  private static let generic = unsafeBitCast((0, 0), to: UnownedSerialExecutor.self)

  /// Worker threads: twice the online CPUs, at least four. They never exit. More than the CPU
  /// count because, unlike Dispatch, the pool does not add threads while a job blocks.
  static var workerCount: Int {
    max(4, 2 * max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
  }

  /// Starts the worker threads.
  init() {
    timer = ExecutorTimer(target: queue)
    for index in 0..<Self.workerCount {
      ExecutorThread.start(name: "bg-exec-\(index)") { [queue] in
        while true { queue.next().runSynchronously(on: Self.generic) }
      }
    }
  }

  func enqueue(_ job: consuming ExecutorJob) {
    queue.enqueue(UnownedJob(job))
  }

  /// The runtime calls this for `Task.sleep` on `ContinuousClock` (kernel `CLOCK_BOOTTIME`)
  /// and `SuspendingClock` (`CLOCK_MONOTONIC`); other clocks with `Swift.Duration` are
  /// measured on `CLOCK_MONOTONIC`.
  func enqueue<C: Clock>(
    _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
  ) {
    guard let delay = delay as? Duration else {
      preconditionFailure(
        "ExecutorPool cannot schedule on \(C.self): its Duration is not Swift.Duration")
    }
    let kernelClock = clock is ContinuousClock ? CLOCK_BOOTTIME : CLOCK_MONOTONIC
    timer.enqueue(UnownedJob(job), at: .after(delay, on: kernelClock))
  }
}
