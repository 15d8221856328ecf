import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct DispatchTests {
  @Test("a 13 h gap on a 4 h periodic gives one run, and cadence restarts from now")
  func coalescing() async throws {
    let job = id("test.periodic.coalesce")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(taskId: job, interval: .seconds(4 * 3600)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(h.task(job)?.nextRunHint == h.at(4 * 3600))

    h.clock.advance(by: .seconds(13 * 3600))
    await h.waitFor(job, count: 2) { $0.isWorkCompleted }
    // The loop now sleeps until 13 h + 4 h: no catch-up runs are pending.
    await h.clock.waitForSleepers(until: h.at(17 * 3600))
    #expect(worker.invocations == 2)
    #expect(h.task(job)?.nextRunHint == h.at(17 * 3600))
    #expect(try await h.status(job)?.recentRuns.count == 2)
  }

  @Test("periodic success and failure both schedule now + interval with attempts reset")
  func periodicCadence() async throws {
    let job = id("test.periodic.cadence")
    let worker = RecordingWorker(.retry, .failure(reason: "boom"), .success)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, interval: .seconds(60), backoff: .exponential(initialDelay: .seconds(100))))
    // Retry: delay 100 s clamped to the 60 s interval.
    let retry = await h.waitFor(job) { $0.isRetryScheduled }
    #expect(retry[0].kind == .retryScheduled(nextAttempt: 1, delay: .seconds(60)))
    h.clock.advance(by: .seconds(60))
    await h.waitFor(job, count: 2) { $0.isWorkCompleted }
    #expect(worker.attempts == [0, 1])
    #expect(h.task(job)?.attempt == 0)
    #expect(h.task(job)?.lastResult == .failure)
    #expect(h.task(job)?.nextRunHint == h.at(120))
    h.clock.advance(by: .seconds(60))
    await h.waitFor(job, count: 3) { $0.isWorkCompleted }
    #expect(worker.attempts == [0, 1, 0])
  }

  @Test("1,000 concurrent triggers give exactly one run per cycle")
  func racingTriggers() async throws {
    let job = id("test.race.triggers")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    // A budget longer than the clock step below: a run `runNow` started before the step must
    // not expire in it (it did once under ThreadSanitizer: the run ended as a budget expiry, no
    // `workCompleted` came, and the wait for it hung the test run).
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, initialDelay: .seconds(3600), budget: .seconds(7200)))
    let backgrounder = h.backgrounder
    let driver = h.driver
    let clock = h.clock
    let outcomes = await withTaskGroup(of: RunNowOutcome?.self) { group in
      for index in 0..<1000 {
        group.addTask {
          switch index % 4 {
          case 0: return backgrounder.runNow(job)
          case 1:
            backgrounder.dispatchNow()
            return nil
          case 2:
            try? driver.setInitialDelayMet(job)
            return nil
          default:
            if index == 503 { clock.advance(by: .seconds(3600)) }
            backgrounder.dispatchNow()
            return nil
          }
        }
      }
      var outcomes: [RunNowOutcome] = []
      for await outcome in group { if let outcome { outcomes.append(outcome) } }
      return outcomes
    }
    #expect(outcomes.count == 250)
    #expect(outcomes.allSatisfy { $0 == .triggered || $0 == .alreadyRunning || $0 == .noSuchTask })
    await h.waitFor(job) { $0.isWorkStarted }
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
    await h.backgrounder.shutdown()
    #expect(worker.invocations == 1)
    #expect(h.events(job) { $0.isWorkStarted }.count == 1)
    let status = try #require(try TaskStoreReader(path: h.storePath).task(job))
    #expect(status.state == .succeeded)
    #expect(status.recentRuns.count == 1)
  }

  /// `runNow` calls, external triggers and the dispatch loop's own wake-up at the due time race
  /// from concurrent tasks against one periodic cycle. The clock is stepped past the due time
  /// without waking the loop, so every claim happens at the same instant and only one may win:
  /// the others must see the run in flight (or a stale queue entry) and start nothing.
  @Test(
    "runNow, external triggers and the due-time wake-up racing on one periodic cycle start one run",
    arguments: 0..<20)
  func racingPeriodicTriggers(iteration: Int) async throws {
    let job = id("test.race.periodic")
    let clock = ManualClock()
    let start = clock.date
    let gate = BlockingWorker()
    // The first cycle completes at once; every later run blocks until `gate` is released.
    let worker = ClosureWorker { context in
      context.startedAt == start ? .success : await gate.execute(context)
    }
    let h = try await Harness.start(workers: [job: worker], clock: clock)

    _ = await h.backgrounder.schedule(WorkRequest.Periodic(taskId: job, interval: .seconds(600)))
    await h.waitFor(job) { $0.isWorkCompleted }
    await h.clock.waitForSleepers(until: h.at(600))
    // Due now, but the loop sleeps on: it wakes only when a racer below resumes it.
    clock.jump(by: .seconds(600))
    let backgrounder = h.backgrounder
    let outcomes = await withTaskGroup(of: RunNowOutcome?.self) { group in
      for index in 0..<300 {
        group.addTask {
          switch index % 3 {
          case 0: return backgrounder.runNow(job)
          case 1:
            backgrounder.dispatchNow()
            return nil
          default:
            // The loop's own due-time wake-up, from a different point in each iteration.
            if index == 3 * ((iteration * 47) % 100) + 2 { clock.advance(by: .zero) }
            return nil
          }
        }
      }
      var outcomes: [RunNowOutcome] = []
      for await outcome in group { if let outcome { outcomes.append(outcome) } }
      return outcomes
    }
    await gate.waitUntilInvoked()
    // Every racer has returned and the winning run is in flight: a second claim would have
    // started by now (the concurrency limit is 4), so exactly one run is in flight.
    await h.driver.flush()
    #expect(outcomes.count == 100)
    #expect(outcomes.allSatisfy { $0 == .triggered || $0 == .alreadyRunning })
    #expect(gate.invocations == 1)
    // The recorder reads events on a task of its own: wait for the second start to reach it.
    await h.waitFor(job, count: 2) { $0.isWorkStarted }
    #expect(h.events(job) { $0.isWorkStarted }.count == 2)

    gate.release()
    await h.waitFor(job, count: 2) { $0.isWorkCompleted }
    // The cycle is spent: the loop sleeps until the next one, with no run pending.
    await h.clock.waitForSleepers(until: h.at(1200))
    #expect(gate.invocations == 1)
    #expect(h.events(job) { $0.isWorkStarted }.count == 2)
    #expect(h.task(job)?.nextRunHint == h.at(1200))
  }

  @Test("completion racing budget expiry records exactly one result", arguments: 0..<20)
  func completionVersusExpiry(iteration: Int) async throws {
    let job = id("test.race.expiry")
    let clock = ManualClock()
    let worker = ClosureWorker { context in
      // Finishes exactly when the budget expires.
      try? await clock.sleep(
        until: WallInstant(context.startedAt).advanced(by: context.budget), tolerance: nil)
      return .success
    }
    let h = try await Harness.start(workers: [job: worker], clock: clock)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(10)))
    await h.waitFor(job) { $0.isWorkStarted }
    await h.clock.waitForSleepers(count: 2, until: h.at(10))
    h.clock.advance(by: .seconds(10))
    await h.waitFor(job) { $0.isRecordedResult }
    await h.backgrounder.shutdown()
    #expect(h.events(job) { $0.isRecordedResult }.count == 1)
    let status = try #require(try TaskStoreReader(path: h.storePath).task(job))
    #expect(status.recentRuns.count == 1)
    #expect(status.recentRuns[0].outcome == "success" || status.recentRuns[0].outcome == "expired")
    await h.stop()
  }

  @Test("budget expiry cancels the worker and records a retry with attemptFailed(expired)")
  func budgetExpiry() async throws {
    let job = id("test.budget.expiry")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(30)))
    await h.waitFor(job) { $0.isWorkStarted }
    await h.clock.waitForSleepers(until: h.at(30))
    h.clock.advance(by: .seconds(30))
    await h.waitFor(job) { $0 == .attemptFailed(reason: .expired) }
    let retry = await h.waitFor(job) { $0.isRetryScheduled }
    #expect(retry[0].kind == .retryScheduled(nextAttempt: 1, delay: .seconds(30)))
    #expect(worker.cancelledRuns == 1)
    #expect(h.events(job) { $0.isWorkCompleted }.isEmpty)
    #expect(h.events(job) { if case .workerAbandoned = $0 { true } else { false } }.isEmpty)
    let task = try #require(h.task(job))
    #expect(task.state == .backoff)
    #expect(task.attempt == 1)
  }

  @Test("a worker ignoring cancellation is abandoned after the grace period and reported")
  func abandonedWorker() async throws {
    let job = id("test.budget.abandon")
    let worker = BlockingWorker(ignoresCancellation: true)
    let h = try await Harness.start(workers: [job: worker], gracePeriod: .seconds(7))
    defer {
      worker.release()
      Task { await h.stop() }
    }

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(30)))
    await h.waitFor(job) { $0.isWorkStarted }
    await h.clock.waitForSleepers(until: h.at(30))
    h.clock.advance(by: .seconds(30))
    await h.clock.waitForSleepers(until: h.at(37))
    #expect(h.events(job) { $0.isRecordedResult }.isEmpty)
    h.clock.advance(by: .seconds(7))
    await h.waitFor(job) { $0 == .workerAbandoned(attempt: 0) }
    await h.waitFor(job) { $0 == .attemptFailed(reason: .expired) }
    #expect(h.backgrounder.diagnostics().abandonedWorkers == 1)
    #expect(h.task(job)?.attempt == 1)
  }

  @Test("expire(taskId) ends the running worker's budget now")
  func expireNow() async throws {
    let job = id("test.budget.expire-now")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    #expect(h.backgrounder.expire(job) == false)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    await worker.waitUntilInvoked()
    #expect(h.backgrounder.expire(job))
    await h.waitFor(job) { $0 == .attemptFailed(reason: .expired) }
    #expect(worker.cancelledRuns == 1)
  }

  @Test("expedited work is dispatched before standard work")
  func expeditedFirst() async throws {
    let blocker = id("test.order.blocker")
    let standard = id("test.order.standard")
    let expedited = id("test.order.expedited")
    let gate = BlockingWorker()
    let order = RecordingWorker(.success)
    let h = try await Harness.start(
      workers: [blocker: gate, standard: order, expedited: order], concurrencyLimit: 1)

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: blocker))
    await h.waitFor(blocker) { $0.isWorkStarted }
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: standard))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: expedited, executionHint: .expedited(onQuotaExhausted: .drop)))
    gate.release()
    await h.waitFor(standard) { $0.isWorkCompleted }
    #expect(order.contexts.map(\.taskId) == [expedited, standard])
  }

  @Test("an exhausted expedited quota drops or demotes as requested")
  func expeditedQuota() async throws {
    let first = id("test.quota.first")
    let dropped = id("test.quota.dropped")
    let demoted = id("test.quota.demoted")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(
      workers: [first: worker, dropped: worker, demoted: worker],
      expeditedQuota: ExpeditedQuota(runs: 1, window: .seconds(3600)))

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: first, executionHint: .expedited(onQuotaExhausted: .drop)))
    await h.waitFor(first) { $0.isWorkCompleted }
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: dropped, executionHint: .expedited(onQuotaExhausted: .drop)))
    await h.waitFor(dropped) { $0 == .skipped(reason: .quotaExhausted) }
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: demoted, executionHint: .expedited(onQuotaExhausted: .runAsRegular)))
    await h.waitFor(demoted) { $0.isWorkCompleted }
    #expect(worker.contexts.map(\.taskId) == [first, demoted])
    #expect(try await h.status(dropped)?.state == .failed)
  }
}
