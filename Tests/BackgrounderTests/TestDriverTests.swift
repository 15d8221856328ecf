import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct TestDriverTests {
  @Test("setAllConstraintsMet runs constrained work at once")
  func allConstraintsMet() async throws {
    let job = id("test.driver.constraints")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(
      workers: [job: worker], network: .offline,
      power: PowerConditions(isCharging: false, isBatteryNotLow: false))

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job,
        constraints: .init(
          networkRequired: .unmetered, requiresCharging: true, requiresBatteryNotLow: true)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    try h.driver.setAllConstraintsMet(job)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(throws: TestDriverError.noSuchTask(job)) { try h.driver.setAllConstraintsMet(job) }
  }

  @Test("a bounded wait for an event that never comes ends with what matched; one met ends at once")
  func boundedWait() async throws {
    let job = id("test.driver.bounded")
    let h = try await Harness.start(workers: [job: RecordingWorker(.success)])
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    let completed = await h.recorder.wait(count: 1, timeout: .seconds(120)) {
      $0.taskId == job && $0.kind.isWorkCompleted
    }
    #expect(completed.count == 1)
    let started = ContinuousClock.now
    let never = await h.recorder.wait(count: 2, timeout: .milliseconds(200)) {
      $0.taskId == job && $0.kind.isWorkCompleted
    }
    #expect(never.count == 1)
    #expect(ContinuousClock.now - started >= .milliseconds(200))
  }

  @Test("setPeriodDelayMet makes a periodic due; setInitialDelayMet only applies to one-time work")
  func delays() async throws {
    let job = id("test.driver.period")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(WorkRequest.Periodic(taskId: job, interval: .seconds(86_400)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(throws: TestDriverError.noSuchTask(job)) { try h.driver.setInitialDelayMet(job) }
    try h.driver.setPeriodDelayMet(job)
    await h.waitFor(job, count: 2) { $0.isWorkCompleted }
    #expect(worker.invocations == 2)
    #expect(h.clock.date == h.t0)
  }

  @Test("stopRunningWork cancels the worker with the reason and records a retry without an attempt")
  func stopRunningWork() async throws {
    let job = id("test.driver.stop")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    #expect(throws: TestDriverError.notRunning(job)) { try h.driver.stopRunningWork(job) }
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    await h.waitFor(job) { $0.isWorkStarted }
    await worker.waitUntilInvoked()
    try h.driver.stopRunningWork(job, reason: .requested)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .requested) }
    #expect(worker.stopReasons == [.requested])
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 2)
    #expect(try await h.status(job)?.recentRuns.map(\.outcome) == ["success", "stopped"])
  }

  @Test("the worker context carries id, attempt, input, budget and a progress reporter")
  func context() async throws {
    let job = id("test.driver.context")
    let worker = ClosureWorker { context in
      context.progress.report(0.5, message: "half")
      return context.input.string("name") == "x" && context.budget == .seconds(42)
        ? .success : .failure(reason: "bad context")
    }
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, input: ["name": .string("x")], budget: .seconds(42)))
    let done = await h.waitFor(job) { $0.isWorkCompleted }
    #expect(done[0].kind == .workCompleted(attempt: 0, result: .success, runtime: .zero))
    #expect(h.events(job) { $0 == .progress(fraction: 0.5, message: "half") }.count == 1)
  }
}
