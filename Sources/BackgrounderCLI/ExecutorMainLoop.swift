#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  import Glibc
  @_spi(ExperimentalCustomExecutors) import _Concurrency

  /// The main actor's executor: runs its jobs on the main thread, which blocks in `read` while
  /// there are none. ``run()`` is entered once by ``ExecutorEntryPoint`` and never returns.
  final class ExecutorMainLoop: MainExecutor, Sendable {
    private let queue = ExecutorJobQueue()
    private let mainThread = pthread_self()

    /// Created on the main thread (by ``ExecutorEntryPoint`` through the factory).
    init() {}

    func enqueue(_ job: consuming ExecutorJob) {
      queue.enqueue(UnownedJob(job))
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
