#if compiler(>=6.3)  // the executors exist only with the Swift 6.3 custom-executor SPI
  import Locking
  import TestSupport
  import Testing

  @testable import QuietExecutor

  /// A pool's quiet action runs once after each burst of work, and not while the pool idles.
  @Suite("Quiet action")
  struct QuietActionTests {
    @Test("runs once after a burst, not again while idle, and again after the next burst")
    func onceAfterEachBurst() async throws {
      let actions = Lock(0)
      let ran = Lock(0)
      let pool = ExecutorPool(
        whenQuiet: QuietAction(after: .milliseconds(20), atMostEvery: .zero) {
          actions.withLock { $0 += 1 }
        })
      // The burst is made by one job on the pool, so the pool is busy from its first job to its
      // last: made from the test's task, a pause of that task longer than 20 ms (seen under
      // ThreadSanitizer in CI) split it in two bursts and two actions.
      Task(executorPreference: pool) { @Sendable in
        for _ in 0..<100 {
          Task(executorPreference: pool) { @Sendable in ran.withLock { $0 += 1 } }
        }
      }
      #expect(await waitUntil { actions.withLock { $0 } == 1 })
      #expect(ran.withLock { $0 } == 100, "after the burst's jobs")
      // Idle: a pool that kept waking for its action would count more.
      try await Task.sleep(for: .milliseconds(200))
      #expect(actions.withLock { $0 } == 1)
      Task(executorPreference: pool) { @Sendable in ran.withLock { $0 += 1 } }
      #expect(await waitUntil { actions.withLock { $0 } == 2 })
      try await Task.sleep(for: .milliseconds(100))
      #expect(actions.withLock { $0 } == 2)
    }
  }
#endif
