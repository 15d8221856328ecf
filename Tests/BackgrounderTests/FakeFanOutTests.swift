import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import TestSupport
import Testing

/// The test kit's fan-outs (`FakeConditionSource`, `ManualClock.clockChanges()`) deliver
/// through `Broadcaster`, outside their locks. A value delivered under the source's lock
/// deadlocks with a subscriber cancelled at the same moment: the delivery resumes the
/// subscriber's task (taking its status lock) while holding the source's lock; the
/// cancellation runs the stream's termination handler (taking the source's lock, to
/// unsubscribe) while holding the task's status lock. A hang fails on the time limit. The
/// rounds yield and wait for their deliverer many times: on the CPU-bound threads, not in the
/// pool the run's other tests wait in.
@Suite(.cpuBound, .timeLimit(.minutes(3))) struct FakeFanOutTests {
  /// Subscribers waiting on `subscribe()` are cancelled, 8 per round, while a thread of its own
  /// calls `deliver` 64 times (it waits between rounds: a thread spinning through the whole
  /// test took a core from the run's other tests).
  private func race<S: AsyncSequence & Sendable>(
    rounds: Int, subscribe: @escaping @Sendable () -> S, deliver: @escaping @Sendable () -> Void
  ) async where S.Failure == Never {
    let stop = Lock(false)
    let roundStarted = DispatchSemaphore(value: 0)
    let roundDelivered = DispatchSemaphore(value: 0)
    let deliverer = Thread {
      while true {
        roundStarted.wait()
        if stop.withLock({ $0 }) { break }
        for _ in 0..<64 { deliver() }
        roundDelivered.signal()
      }
    }
    deliverer.start()
    for _ in 0..<rounds {
      // Child tasks, so that they run where the test runs (unstructured ones would not).
      await withTaskGroup(of: Void.self) { subscribers in
        for _ in 0..<8 { subscribers.addTask { for await _ in subscribe() {} } }
        roundStarted.signal()
        await Task.yield()
        subscribers.cancelAll()
      }
      while roundDelivered.wait(timeout: .now()) == .timedOut { await Task.yield() }
    }
    stop.withLock { $0 = true }
    roundStarted.signal()
  }

  @Test("set() racing cancelled subscribers completes, and a subscriber sees every later set")
  func setRacingCancellation() async {
    let source = FakeConditionSource<Int>(0)
    let counter = Lock(0)
    await race(rounds: 300, subscribe: source.updates) {
      source.set(
        counter.withLock { value in
          value += 1
          return value
        })
    }
    var updates = source.updates().makeAsyncIterator()
    let current = source.current
    #expect(await updates.next() == current)
    source.set(current + 1)
    #expect(await updates.next() == current + 1)
  }

  @Test("jump(by:) racing cancelled clock-change subscribers completes")
  func jumpRacingCancellation() async {
    let clock = ManualClock()
    let start = clock.now
    let jumps = Lock(0)
    await race(rounds: 150, subscribe: clock.clockChanges) {
      jumps.withLock { $0 += 1 }
      clock.jump(by: .seconds(1))
    }
    #expect(clock.now == start.advanced(by: .seconds(jumps.withLock { $0 })))
    var changes = clock.clockChanges().makeAsyncIterator()
    clock.jump(by: .seconds(1))
    #expect(await changes.next() != nil)
  }
}
