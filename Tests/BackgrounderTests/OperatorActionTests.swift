import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// What an operator does to a running runtime: expire a run, change a period, mistype an id;
/// and what a watchdog reads from the dispatch loop.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3))) struct OperatorActionTests {
  @Test("expire() is recorded as expired by the operator, not as a budget expiry")
  func expireOnRequestNamesTheOperator() async throws {
    let job = id("test.operator.expire")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(3600)))
    await worker.waitUntilInvoked()

    #expect(h.backgrounder.expire(job))
    await h.waitFor(job) { $0 == .attemptFailed(reason: .expired) }
    await h.waitFor(job) { $0.isRetryScheduled }
    let status = try #require(try await h.status(job))
    #expect(status.lastReason == "expired on request by the operator")
    #expect(status.recentRuns.first?.outcome == "expired")
    #expect(status.recentRuns.first?.reason == "expired on request by the operator")
    #expect(status.attempt == 1, "an operator expiry uses an attempt, as a budget expiry does")
  }

  @Test("updating a periodic task's interval moves its next run to cycle start + new interval")
  func changedIntervalRecomputesNextRun() async throws {
    let job = id("test.operator.every")
    let h = try await Harness.start(workers: [job: RecordingWorker(.success)])
    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(taskId: job, interval: .seconds(86_400)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(h.task(job)?.nextRunHint == h.at(86_400))

    h.clock.advance(by: .seconds(600))
    let shorter = await h.backgrounder.schedule(
      WorkRequest.Periodic(taskId: job, interval: .seconds(3600)), policy: .update)
    #expect(shorter == .scheduled)
    #expect(h.task(job)?.nextRunHint == h.at(3600))

    let longer = await h.backgrounder.schedule(
      WorkRequest.Periodic(taskId: job, interval: .seconds(7 * 86_400)), policy: .update)
    #expect(longer == .scheduled)
    #expect(h.task(job)?.nextRunHint == h.at(7 * 86_400))
    let stored = try #require(try await h.status(job))
    #expect(stored.nextRun == h.at(7 * 86_400), "the new next run is persisted")
  }

  @Test("a non-ASCII character in an id is reported as itself, with its code point")
  func nonASCIIIdCharacter() {
    #expect(throws: TaskIdError.invalidCharacter("é")) { try TaskId("dév.example") }
    #expect(throws: TaskIdError.invalidCharacter("😀")) { try TaskId("dev.😀") }
    let error = TaskIdError.invalidCharacter("é")
    #expect(error.description.hasPrefix("task id contains 'é' (U+00E9);"), "\(error)")
    let control = TaskIdError.invalidCharacter("\u{1B}")
    #expect(control.description.hasPrefix("task id contains U+001B;"), "\(control)")
  }

  @Test("an idle dispatch loop counts as progressing; a stalled one does not")
  func dispatchLoopProgress() async throws {
    let job = id("test.operator.stall")
    let worker = RecordingWorker(.success)
    let stall = LoopStall()
    // Released before the runtime stops (its shutdown waits for the loop).
    defer { stall.release() }
    let h = try await Harness.start(
      workers: [job: worker], dispatchLoopWillIterate: stall.willIterate)
    let idle = try await waitForProgress(h) { $0.isIdle }
    #expect(idle.madeProgress(since: idle), "idle is healthy without iterating")

    // Stalled, then woken by a schedule: the loop iterates once more and blocks there.
    stall.stall()
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    let stalled = try await waitForProgress(h) {
      !$0.isIdle && $0.iterations > idle.iterations
    }
    let later = try #require(h.backgrounder.dispatchLoopProgress())
    #expect(!later.isIdle && later.iterations == stalled.iterations)
    #expect(!later.madeProgress(since: stalled), "busy twice without iterating is stuck")

    // The stalled loop dispatched nothing.
    #expect(worker.invocations == 0)
    #expect(h.backgrounder.dispatchLoopProgress()?.iterations == stalled.iterations)
  }

  private func waitForProgress(
    _ h: Harness, _ predicate: (DispatchLoopProgress) -> Bool
  ) async throws -> DispatchLoopProgress {
    for _ in 0..<2000 {
      if let progress = h.backgrounder.dispatchLoopProgress(), predicate(progress) {
        return progress
      }
      await Task.yield()
      try await Task.sleep(for: .milliseconds(1))
    }
    throw CancellationError()
  }
}

@Suite(.stopsRuntimes) struct DispatchLoopProgressTests {
  @Test func progressRules() {
    let busy = DispatchLoopProgress(iterations: 5, isIdle: false)
    let idle = DispatchLoopProgress(iterations: 5, isIdle: true)
    #expect(!busy.madeProgress(since: busy))
    #expect(DispatchLoopProgress(iterations: 6, isIdle: false).madeProgress(since: busy))
    #expect(idle.madeProgress(since: busy))
    #expect(busy.madeProgress(since: idle), "a wake-up just delivered gets one period")
  }
}
