#if compiler(>=6.3)  // the executors exist only with the Swift 6.3 custom-executor SPI
  import Glibc
  import Locking
  import SystemCalls
  import TestSupport
  import Testing

  @testable import QuietExecutor

  /// The quiet executor's pool and queue: every job runs once, however it was enqueued.
  @Suite("Quiet executor pool")
  struct ExecutorPoolTests {
    /// A pool of its own, apart from the timer suite's (which counts its pending sleeps).
    static let pool = ExecutorPool()

    /// Tasks started from many threads at once all run: no wake-up is lost between a worker
    /// finding the queue empty and going to sleep.
    @Test("jobs enqueued from many threads at once all run once")
    func noLostWakeups() async throws {
      let pool = Self.pool
      let ran = Lock(0)
      let threads = 8
      let perThread = 500
      for _ in 0..<threads {
        try SystemThread.detach(name: "test-enqueuer") {
          for _ in 0..<perThread {
            Task(executorPreference: pool) { @Sendable in ran.withLock { $0 += 1 } }
          }
        }
      }
      #expect(await waitUntil { ran.withLock { $0 } == threads * perThread })
      try await Task.sleep(for: .milliseconds(20))
      #expect(ran.withLock { $0 } == threads * perThread, "none ran twice")
    }

    /// A job that blocks does not hold the others back: a helper thread runs them. Without
    /// helpers (one worker) the second job would never run and the first never be released.
    @Test("a blocked job does not hold back the next; helpers end once the queue is empty")
    func helpersRunWhileAJobBlocks() async throws {
      let pool = Self.pool
      let released = Lock(false)
      let blocked = Task(executorPreference: pool) { @Sendable in
        // Bounded, so that without a helper the test fails instead of hanging.
        for _ in 0..<10_000 where !released.withLock({ $0 }) { usleep(1000) }
      }
      try await Task.sleep(for: .milliseconds(20))
      Task(executorPreference: pool) { @Sendable in released.withLock { $0 = true } }
      #expect(await waitUntil { released.withLock { $0 } })
      await blocked.value
      #expect(await waitUntil { pool.queue.helperCount == 0 })
    }

    /// A pool limited to no helper (a one-shot `status`) runs every job on its resident
    /// worker, one after the other: a job enqueued while another runs waits for it instead of
    /// starting a helper thread (with helpers, it ran during the first job's 20 ms).
    @Test("a pool without helpers starts no helper thread: jobs wait for the resident worker")
    func noHelpers() async throws {
      let pool = ExecutorPool()
      pool.queue.limitHelpers(to: 0)
      let order = Lock<[String]>([])
      let first = Task(executorPreference: pool) { @Sendable in
        let second = Task(executorPreference: pool) { @Sendable in
          order.withLock { $0.append("second") }
        }
        usleep(20_000)
        order.withLock { $0.append("first ends, \(pool.queue.helperCount) helpers") }
        return second
      }
      await first.value.value
      #expect(order.withLock { $0 } == ["first ends, 0 helpers", "second"])
    }

    /// Unstructured tasks, awaited by polling: a parent awaiting a task group escalates its
    /// children's priority, and an escalated sleeper was seen woken early (the timer takes any
    /// re-enqueue of a sleeping task for a cancellation; see the notes of branch i25-loop).
    @Test("sleeps of different lengths wake in deadline order, none before its deadline")
    func sleepsWakeInOrder() async throws {
      let pool = Self.pool
      let clock = ContinuousClock()
      let start = clock.now
      let woken = Lock<[(delay: Int, at: ContinuousClock.Instant)]>([])
      for delay in [150, 50, 100] {
        Task(executorPreference: pool) { @Sendable in
          try await Task.sleep(for: .milliseconds(delay))
          let now = clock.now
          woken.withLock { $0.append((delay, now)) }
        }
      }
      #expect(await waitUntil { woken.withLock { $0.count } == 3 })
      let wakes = woken.withLock { $0 }
      for wake in wakes {
        #expect(wake.at >= start + .milliseconds(wake.delay), "\(wake.delay) ms woke early")
      }
      // In deadline order, unless the machine was too busy to tell: two sleeps due by the time
      // a thread was free run at once (a helper takes the second), in either order.
      let order = wakes.map(\.delay)
      let late = wakes.contains { $0.at - start > .milliseconds($0.delay + 40) }
      #expect(late || order == [50, 100, 150], "\(order)")
    }
  }
#endif
