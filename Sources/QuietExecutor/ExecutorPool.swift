#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  import Glibc
  import SystemCalls
  @_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

  /// The global executor: a fixed set of worker threads sharing one ``ExecutorJobQueue``, plus
  /// an ``ExecutorTimer`` for delayed jobs (`Task.sleep`). Idle workers block in `read`.
  final class ExecutorPool: TaskExecutor, SchedulingExecutor, Sendable {
    private let queue = ExecutorJobQueue()
    /// Holds delayed jobs; the main loop reports resumed tasks to it too.
    let timer: ExecutorTimer

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
        ExecutorThreads.start(name: "bg-exec-\(index)") { [queue] in
          while true { queue.next().runSynchronously(on: Self.generic) }
        }
      }
    }

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      timer.releaseSleeps(of: job)
      queue.enqueue(job)
    }

    /// The runtime calls this for `Task.sleep` on `ContinuousClock` (kernel `CLOCK_BOOTTIME`)
    /// and `SuspendingClock` (`CLOCK_MONOTONIC`); other clocks with `Swift.Duration` are
    /// measured on `CLOCK_MONOTONIC`. A clock with another `Duration` type sleeps by its own
    /// `sleep(for:)` in a task, after which the job is enqueued.
    func enqueue<C: Clock>(
      _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
    ) {
      let job = UnownedJob(job)
      guard let duration = delay as? Duration else {
        Task.detached { [queue] in
          try? await clock.sleep(for: delay, tolerance: tolerance)
          queue.enqueue(job)
        }
        return
      }
      let kernelClock = clock is ContinuousClock ? CLOCK_BOOTTIME : CLOCK_MONOTONIC
      let sleeper = withUnsafeCurrentTask { $0.map(ExecutorTimer.JobIdentity.init) }
      timer.enqueue(job, at: .after(duration, on: kernelClock), sleeper: sleeper)
    }
  }
#endif
