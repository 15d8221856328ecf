#if compiler(>=6.3)  // the custom-executor SPI is new in Swift 6.3
  import Glibc
  import Locking
  import SystemCalls
  @_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

  /// The global executor: one resident worker thread, helpers started while jobs wait for it, and
  /// an ``ExecutorTimer`` for delayed jobs (`Task.sleep`) that the resident worker keeps.
  ///
  /// Idle, the pool is one thread, the resident worker (in the daemon and `status`, the main
  /// thread, which runs the main actor's jobs too: ``ExecutorMainLoop``), in `poll` on the queue's wakeup pipe
  /// with the earliest sleep's deadline as timeout (none while no sleep is pending). A job
  /// enqueued while it is busy wakes a parked helper thread or starts one, up to
  /// ``helperLimit``; a helper runs jobs until the queue is empty, then ends, or, with a quiet
  /// action, parks until the next job or the quiet action, which ends the parked helpers. So a
  /// job that blocks does not hold the others back (helpers take them), a steady stream of work
  /// starts no threads, and nothing wakes while nothing happens.
  final class ExecutorPool: TaskExecutor, SchedulingExecutor, Sendable {
    /// The jobs to run (internal for tests).
    let queue: ExecutorJobQueue
    /// Holds delayed jobs; the main loop reports resumed tasks to it too.
    let timer: ExecutorTimer
    /// What the resident worker does once it falls quiet (set before it starts).
    private let quietAction = Lock<QuietAction?>(nil)

    /// The generic executor reference (`SerialExecutorRef::generic()`: identity and witness
    /// table both null), which the runtime also passes when it runs global jobs itself.
    private static let generic = unsafeBitCast((0, 0), to: UnownedSerialExecutor.self)

    /// Helper threads at most: twice the online CPUs, at least three (with the resident worker
    /// the pool has at most as many threads as the fixed pool it replaced: max(4, 2 × CPUs)).
    static var helperLimit: Int {
      max(4, 2 * max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) - 1
    }

    /// How long a job enqueued while the resident worker is busy waits for it, in a
    /// long-running process (one with a quiet action), before a helper takes it while no job
    /// was taken meanwhile (``ExecutorJobQueue/handOffLate(after:)``).
    static let handOffDelay = Duration.milliseconds(1)

    /// The main actor's jobs, run by the resident worker as well (``runResident(main:)``).
    struct MainJobs: Sendable {
      let queue: ExecutorJobQueue
      let executor: UnownedSerialExecutor
    }

    /// Starts the resident worker on a thread of its own (`bg-exec`), unless `residentThread` is
    /// false: then the main thread becomes it by calling ``runResident(main:)``. The resident
    /// worker runs `whenQuiet` once it falls quiet after work (``QuietPeriod``).
    init(residentThread: Bool = true, whenQuiet: QuietAction? = nil) {
      queue = ExecutorJobQueue(helperLimit: Self.helperLimit) { queue in
        ExecutorThreads.start(name: "bg-exec-helper") {
          while let job = queue.nextForHelper() { job.runSynchronously(on: Self.generic) }
        }
      }
      timer = ExecutorTimer(target: queue)
      if let whenQuiet { setQuietAction(whenQuiet) }
      if residentThread {
        ExecutorThreads.start(name: "bg-exec") { [self] in runResident(main: nil) }
      }
    }

    /// Sets what the resident worker does once it falls quiet; call it before the worker starts
    /// (``runResident(main:)``), which reads it once.
    func setQuietAction(_ action: QuietAction) {
      quietAction.withLock { $0 = action }
      queue.wakeResidentWhenHelpersEnd()
      queue.parkIdleHelpers()
      queue.handOffLate(after: Self.handOffDelay)
      SystemThread.parkFinishedThreads()
    }

    /// The resident worker: runs jobs while there are any (the main actor's first, if it runs
    /// them too), hands due sleeps to the queue, runs the quiet action when it is due, and
    /// otherwise waits in `poll` for a wakeup (a job, an earlier deadline) or the next deadline.
    func runResident(main: MainJobs?) -> Never {
      let action = quietAction.withLock { $0 }
      var quiet = action.map { QuietPeriod(delay: $0.delay, minimumInterval: $0.minimumInterval) }
      // Work counts wherever it ran: here, or on helpers (which may take a whole burst, even
      // before this worker starts).
      var jobsTaken: UInt64 = 0
      var descriptors = [pollfd(fd: queue.wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
      if let main {
        descriptors.append(
          pollfd(fd: main.queue.wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0))
      }
      while true {
        if let main, let job = main.queue.nextOrSleep() {
          job.runSynchronously(on: main.executor)
          continue
        }
        if let job = queue.nextOrSleep() {
          job.runSynchronously(on: Self.generic)
          continue
        }
        var (due, timeout) = timer.takeDue()
        if let first = due.first {
          queue.stopSleeping()
          queue.append(first)  // this thread runs it next; others may start helpers
          for job in due.dropFirst() { queue.enqueue(job) }
          continue
        }
        if quiet != nil {
          let taken = queue.takenCount &+ (main?.queue.takenCount ?? 0)
          if taken != jobsTaken { quiet?.ranWork() }
          jobsTaken = taken
        }
        switch quiet?.beforeWait(now: ExecutorTimer.Deadline.now(CLOCK_MONOTONIC)) {
        case .act?:
          // Busy while it acts: a job enqueued meanwhile starts a helper instead of waiting
          // (a wakeup already sent ends the next wait at once).
          timer.stopWaiting()
          queue.stopSleeping()
          main?.queue.stopSleeping()
          queue.retireParkedHelpers()
          SystemThread.retireParkedThreads()
          action?.run()
          continue
        case .waitAtMost(let nanoseconds)?:
          let milliseconds = Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
          timeout = timeout < 0 ? milliseconds : min(timeout, milliseconds)
        case .wait?, nil:
          break
        }
        for index in descriptors.indices { descriptors[index].revents = 0 }
        let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
        timer.stopWaiting()
        queue.stopSleeping()
        main?.queue.stopSleeping()
        guard ready > 0 else { continue }
        if descriptors[0].revents != 0 { queue.wakeup.consume(upTo: 16) }
        if let main, descriptors[1].revents != 0 { main.queue.wakeup.consume(upTo: 16) }
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
