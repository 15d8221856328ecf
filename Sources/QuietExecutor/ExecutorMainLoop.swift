#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  import Glibc
  @_spi(ExperimentalCustomExecutors) import _Concurrency

  /// The main actor's executor: runs its jobs on the main thread, which is also the pool's
  /// resident worker (``ExecutorPool/runResident(main:)``) and so blocks in `poll` while there
  /// is nothing to do. ``run()`` is entered once by ``ExecutorEntryPoint`` and never returns.
  final class ExecutorMainLoop: MainExecutor, Sendable {
    private let queue = ExecutorJobQueue()
    private let mainThread = pthread_self()
    /// The pool whose resident worker the main thread is; its timer is told of resumed tasks (a
    /// task resumed here may leave a cancelled sleep to disarm).
    private let pool: ExecutorPool

    /// Created on the main thread (by ``ExecutorEntryPoint`` through the factory), with a pool
    /// started without a resident thread.
    init(pool: ExecutorPool) {
      self.pool = pool
    }

    func enqueue(_ job: consuming ExecutorJob) {
      let job = UnownedJob(job)
      pool.timer.releaseSleeps(of: job)
      queue.enqueue(job)
    }

    func run() throws {
      pool.runResident(main: .init(queue: queue, executor: asUnownedSerialExecutor()))
    }

    /// Not supported: the main loop runs for the life of the process.
    func stop() {}

    func isIsolatingCurrentContext() -> Bool? {
      pthread_equal(pthread_self(), mainThread) != 0
    }
  }
#endif
