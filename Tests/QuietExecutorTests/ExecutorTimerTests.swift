#if compiler(>=6.3)  // the executors exist only with the Swift 6.3 custom-executor SPI
  import Glibc
  import TestSupport
  import Testing

  @testable import QuietExecutor

  /// The quiet executor's timer: sleeps of tasks that prefer an ``ExecutorPool`` go through it,
  /// as every sleep of `status` and the daemon does once the pool is the global executor.
  @Suite("Quiet executor timer", .serialized)
  struct ExecutorTimerTests {
    /// One pool for the suite: its resident worker never exits.
    static let pool = ExecutorPool()

    @Test("a sleep on the pool wakes its task when due")
    func sleepWakes() async throws {
      let started = ContinuousClock.now
      try await Task(executorPreference: Self.pool) {
        try await Task.sleep(for: .milliseconds(20))
      }.value
      #expect(ContinuousClock.now - started >= .milliseconds(20))
      #expect(await waitUntil { Self.pool.timer.pendingCount == 0 })
    }

    @Test("a cancelled sleep hands its job back at once and leaves no timer armed")
    func cancelledSleepDisarms() async throws {
      let sleeper = Task(executorPreference: Self.pool) {
        try await Task.sleep(for: .seconds(3600))
      }
      #expect(await waitUntil { Self.pool.timer.isArmed })
      sleeper.cancel()
      await #expect(throws: CancellationError.self) { try await sleeper.value }
      // Released when the cancelled task was enqueued, before it could finish.
      #expect(Self.pool.timer.pendingCount == 0)
      // The resident worker left its hour-long `poll` and waits without a timeout.
      #expect(await waitUntil { !Self.pool.timer.isArmed })
    }

    @Test("cancelling one sleeper keeps the other sleeps armed, and they still wake")
    func otherSleepsStay() async throws {
      let long = Task(executorPreference: Self.pool) {
        try await Task.sleep(for: .seconds(3600))
      }
      let short = Task(executorPreference: Self.pool) {
        // Long enough to still be pending while the other sleeper is cancelled, on a loaded
        // machine too.
        try await Task.sleep(for: .seconds(3))
      }
      #expect(await waitUntil { Self.pool.timer.pendingCount == 2 })
      long.cancel()
      await #expect(throws: CancellationError.self) { try await long.value }
      #expect(Self.pool.timer.pendingCount == 1)
      // The resident worker that keeps the sleeps may be running the released job: it arms
      // again for the remaining sleep once it waits.
      #expect(await waitUntil { Self.pool.timer.isArmed })
      try await short.value
      #expect(await waitUntil { !Self.pool.timer.isArmed })
    }
  }
#endif
