#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  import Glibc
  @_spi(ExperimentalCustomExecutors) import _Concurrency

  /// The main actor's executor: runs its jobs on the main thread, which blocks in `read` while
  /// there are none. ``run()`` is entered once by ``ExecutorEntryPoint`` and never returns.
  final class ExecutorMainLoop: MainExecutor, Sendable {
    private let queue = ExecutorJobQueue()
    private let mainThread = pthread_self()
    /// The pool's timer: a task resumed here may leave a cancelled sleep to disarm.
    private let timer: ExecutorTimer

    /// Created on the main thread (by ``ExecutorEntryPoint`` through the factory).
    init(timer: ExecutorTimer) {
      self.timer = timer
    }

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      timer.releaseSleeps(of: job)
      queue.enqueue(job)
    }

    func run() throws {
      let executor = asUnownedSerialExecutor()
      while true { queue.next().runSynchronously(on: executor) }
    }

    /// Not supported: the main loop runs for the life of the process.
    func stop() {}

    func isIsolatingCurrentContext() -> Bool? {
      pthread_equal(pthread_self(), mainThread) != 0
    }
  }
#endif
