#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  @_spi(ExperimentalCustomExecutors) import _Concurrency

  /// The process's Swift concurrency executors, without Dispatch: ``ExecutorPool`` for the global
  /// executor and ``ExecutorMainLoop`` (the main thread) for the main actor. Installed by
  /// the `backgrounder` executable's entry point with the toolchain's custom-executor support (Swift 6.3, SPI).
  ///
  /// Why: on Linux the default executors are libdispatch's global queues, and the first worker
  /// thread starts libdispatch's workqueue monitor, a 1 s timer that never stops (about four
  /// system calls a second in an otherwise idle `status --watch`). Idle, the main thread is the
  /// only thread here: it blocks in `poll`, without a timeout unless a sleep is pending.
  struct QuietExecutorFactory: ExecutorFactory {
    /// Its resident worker is the main thread (``ExecutorMainLoop``).
    static let pool = ExecutorPool(residentThread: false)
    static let mainExecutor: any MainExecutor = ExecutorMainLoop(pool: pool)
    static let defaultExecutor: any TaskExecutor = pool
  }

  /// Installs and runs the quiet executors (``QuietExecutorFactory``).
  public enum QuietExecutors {
    /// Makes ``QuietExecutorFactory``'s executors the process's global and main executors.
    /// Call it on the main thread before any task exists. `whenQuiet` runs on the main thread
    /// once the process falls quiet after some work (``QuietAction``). Without
    /// `helperThreads`, the main thread runs every job itself (a one-shot command whose
    /// blocking work has threads of its own starts no helper thread).
    public static func install(whenQuiet: QuietAction? = nil, helperThreads: Bool = true) {
      if let whenQuiet { QuietExecutorFactory.pool.setQuietAction(whenQuiet) }
      if !helperThreads { QuietExecutorFactory.pool.queue.limitHelpers(to: 0) }
      _createExecutors(factory: QuietExecutorFactory.self)
    }

    /// Runs the main actor's jobs on the calling (main) thread; never returns.
    public static func runMainLoop() throws {
      try MainActor.executor.run()
    }
  }
#endif
