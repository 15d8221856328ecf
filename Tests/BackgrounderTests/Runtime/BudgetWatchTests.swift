import BackgrounderTesting
import Foundation
import Testing

@testable import Backgrounder

/// ``BudgetWatch``: one task sleeps until the earliest budget of the runs in flight, on the
/// manual clock.
@Suite(.timeLimit(.minutes(1)))
struct BudgetWatchTests {
  /// A watch running on `clock`, whose due calls are the elements of `due`.
  private struct Running {
    let watch = BudgetWatch()
    let clock = ManualClock()
    let due: AsyncStream<UInt64>
    let dueCalls: AsyncStream<UInt64>.Continuation
    let task: Task<Void, Never>

    init() {
      (due, dueCalls) = AsyncStream.makeStream(of: UInt64.self)
      start = clock.date
      let (watch, clock) = (self.watch, self.clock)
      task = Task { await watch.run(clock: clock) }
    }

    let start: Date

    func at(_ seconds: Int) -> WallInstant { WallInstant(start).advanced(by: .seconds(seconds)) }

    /// Waits until the watch sleeps until `seconds` after the start.
    func sleeping(until seconds: Int) async {
      await clock.waitForSleepers(until: start.addingTimeInterval(TimeInterval(seconds)))
    }

    func watch(_ token: UInt64, until deadline: WallInstant) {
      let calls = dueCalls
      watch.watch(RunToken(value: token), until: deadline) { calls.yield(token) }
    }

    /// Ends the watching task: it returns once cancelled.
    func stop() async {
      task.cancel()
      await task.value
      dueCalls.finish()
    }
  }

  @Test("a budget is due when the clock reaches it, not before; a forgotten one never is")
  func dueAtTheDeadline() async {
    let running = Running()
    running.watch(1, until: running.at(10))
    running.watch(2, until: running.at(20))
    running.watch(3, until: running.at(30))
    running.watch.forget(RunToken(value: 2))
    await running.sleeping(until: 10)
    running.clock.advance(by: .seconds(9))
    // Not due at 9 s: the watch still sleeps until 10 s.
    await running.sleeping(until: 10)
    running.clock.advance(by: .seconds(1))
    var due = running.due.makeAsyncIterator()
    #expect(await due.next() == 1)
    // The forgotten 20 s is skipped: the watch sleeps until 30 s next.
    await running.sleeping(until: 30)
    #expect(running.clock.sleeperDeadlines == [running.start.addingTimeInterval(30)])
    running.clock.advance(by: .seconds(20))
    #expect(await due.next() == 3)
    await running.stop()
    #expect(await due.next() == nil, "nothing else was due")
  }

  @Test("a budget earlier than the one the watch sleeps until wakes it for the earlier")
  func earlierDeadlineRearms() async {
    let running = Running()
    running.watch(1, until: running.at(100))
    await running.sleeping(until: 100)
    running.watch(2, until: running.at(5))
    await running.sleeping(until: 5)
    running.clock.advance(by: .seconds(5))
    var due = running.due.makeAsyncIterator()
    #expect(await due.next() == 2)
    await running.sleeping(until: 100)
    await running.stop()
  }

  @Test("the last budget forgotten disarms the watch: no sleep is left at its deadline")
  func lastForgottenDisarms() async {
    let running = Running()
    running.watch(1, until: running.at(60))
    await running.sleeping(until: 60)
    running.watch.forget(RunToken(value: 1))
    // A later budget is not earlier than a timer still armed for 60 s: it arms only if the
    // forgotten one's timer went.
    running.watch(2, until: running.at(120))
    await running.sleeping(until: 120)
    #expect(running.clock.sleeperDeadlines == [running.start.addingTimeInterval(120)])
    await running.stop()
  }
}
