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

    /// A long-running process's pool (``ExecutorJobQueue/parkIdleHelpers()``): a helper that
    /// finds the queue empty parks, and the next job enqueued while no other thread is free
    /// wakes it instead of starting a thread. Without a resident worker every job goes to a
    /// helper: one runs the blocking job, the few others all 20 jobs. Without parking each of
    /// the 20 started a helper of its own (a new thread id each). Retiring ends the parked ones.
    @Test("parked helpers: jobs one after another while the others are busy reuse one thread")
    func parkedHelperIsReused() async throws {
      let pool = ExecutorPool(residentThread: false)
      pool.queue.parkIdleHelpers()
      let released = Lock(false)
      let blocked = Task(executorPreference: pool) { @Sendable in
        for _ in 0..<10_000 where !released.withLock({ $0 }) { usleep(1000) }
      }
      try await Task.sleep(for: .milliseconds(20))
      var threads = Set<String>()
      for _ in 0..<20 {
        threads.insert(await Task(executorPreference: pool) { @Sendable in Self.threadId() }.value)
      }
      released.withLock { $0 = true }
      await blocked.value
      // A job enqueued just before the helper that ran the previous one parks starts another,
      // up to the limit: never more threads than that.
      #expect(
        threads.count < min(ExecutorPool.helperLimit, 20), "20 jobs ran on \(threads.count) threads"
      )
      #expect(await waitUntil { pool.queue.parkedCount == pool.queue.helperCount })
      #expect(pool.queue.helperCount >= 1)
      pool.queue.retireParkedHelpers()
      #expect(await waitUntil { pool.queue.helperCount == 0 })
    }

    /// A long-running process's pool hands jobs to helpers late
    /// (``ExecutorJobQueue/handOffLate(after:)``): a job enqueued while the resident worker is
    /// busy for a moment runs on it after the current job, and no helper starts. Before, it
    /// woke (or started) a helper at once: two context switches for a job the resident worker
    /// would have run a few microseconds later.
    @Test("handed off late: a job enqueued behind a short one runs on the resident worker")
    func shortWaitStaysOnTheResidentWorker() async throws {
      let pool = ExecutorPool()
      pool.queue.parkIdleHelpers()
      pool.queue.handOffLate(after: .seconds(2))
      let threads = try await Task(executorPreference: pool) {
        @Sendable () async throws -> [String] in
        let first = Self.threadId()
        let second = Task(executorPreference: pool) { @Sendable in Self.threadId() }
        usleep(5_000)
        return [first, await second.value]
      }.value
      #expect(threads[0] == threads[1], "the second job ran on another thread")
      #expect(pool.queue.helperCount == 0)
    }

    /// With late hand-offs, a job that blocks the resident worker still does not hold the
    /// others back for longer than the delay: the watch wakes a helper, which runs the job
    /// that releases the first. Without the watch the second job waited for the first, which
    /// waited for it (bounded, so that the test fails instead of hanging).
    @Test("handed off late: a job blocking the resident worker lets a helper run the next")
    func blockedResidentHandsOffAfterTheDelay() async throws {
      let pool = ExecutorPool()
      pool.queue.parkIdleHelpers()
      pool.queue.handOffLate(after: .milliseconds(20))
      let released = Lock<String?>(nil)
      let blocked = Task(executorPreference: pool) { @Sendable () -> (String, Bool) in
        let thread = Self.threadId()
        Task(executorPreference: pool) { @Sendable in released.withLock { $0 = Self.threadId() } }
        for _ in 0..<10_000 where released.withLock({ $0 }) == nil { usleep(1000) }
        return (thread, released.withLock { $0 } != nil)
      }
      let (residentThread, wasReleased) = await blocked.value
      #expect(wasReleased, "the second job never ran while the first blocked")
      let helperThread = released.withLock { $0 }
      #expect(helperThread != nil && helperThread != residentThread)
      // Retiring ends parked helpers: once the helper parked.
      #expect(await waitUntil { pool.queue.parkedCount == pool.queue.helperCount })
      pool.queue.retireParkedHelpers()
      #expect(await waitUntil { pool.queue.helperCount == 0 })
    }

    /// With late hand-offs and every helper busy when the watch finds jobs still waiting, the
    /// watch keeps looking: a job enqueued later, while the resident worker still blocks and
    /// the helper went back to its parking, is handed to that helper. Before, the watch stayed
    /// marked armed with no timer set, and that job waited for the blocked resident worker.
    @Test("handed off late: at the helper limit the watch keeps looking")
    func watchKeepsLookingAtTheHelperLimit() async throws {
      let pool = ExecutorPool()
      pool.queue.parkIdleHelpers()
      pool.queue.limitHelpers(to: 1)
      pool.queue.handOffLate(after: .milliseconds(10))
      let helperReleased = Lock(false)
      let ran = Lock<[String]>([])
      let thirdRanWhileBlocked = await Task(executorPreference: pool) {
        @Sendable () -> Bool in
        // Blocks the resident worker; the first job enqueued behind it goes to the one helper,
        // which blocks too; the second waits while the watch finds every helper busy.
        Task(executorPreference: pool) { @Sendable in
          for _ in 0..<10_000 where !helperReleased.withLock({ $0 }) { usleep(1000) }
          ran.withLock { $0.append("first") }
        }
        usleep(50_000)
        Task(executorPreference: pool) { @Sendable in ran.withLock { $0.append("second") } }
        usleep(50_000)
        helperReleased.withLock { $0 = true }
        // The helper runs "second" and parks; a third job, while this still blocks: it runs
        // (on the helper) before this returns, or this gives up after 5 s.
        for _ in 0..<10_000 where ran.withLock({ $0.count }) < 2 { usleep(1000) }
        usleep(20_000)
        Task(executorPreference: pool) { @Sendable in ran.withLock { $0.append("third") } }
        for _ in 0..<5_000 where ran.withLock({ $0.count }) < 3 { usleep(1000) }
        return ran.withLock { $0.count } == 3
      }.value
      #expect(thirdRanWhileBlocked, "\(ran.withLock { $0 })")
      #expect(ran.withLock { $0 }.prefix(2) == ["first", "second"])
      pool.queue.retireParkedHelpers()
    }

    /// The kernel's id of the calling thread (`/proc/thread-self` links to `PID/task/TID`):
    /// unlike a `pthread_t`, a new thread does not get the id of one that ended just before.
    static func threadId() -> String {
      var buffer = [CChar](repeating: 0, count: 64)
      let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
      return count > 0
        ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
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
