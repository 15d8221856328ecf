import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// The pieces the `backgrounder` daemon builds on: a fallback factory for ids that are data,
/// the `update` policy, `storedTasks()`, and the edit-only (non-dispatching) mode.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct HostExtensionTests {
  @Test("a fallback factory serves ids registered nowhere, and only once")
  func fallbackFactory() async throws {
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [:], fallback: worker)
    let job = id("test.fallback.any")
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.contexts.map(\.taskId) == [job])
    #expect(throws: RegistrationError.alreadyStarted) {
      try h.backgrounder.registerFallback { _ in nil }
    }
    let fresh = Backgrounder(storePath: h.directory.appendingPathComponent("x.sqlite").path)
    try fresh.registerFallback { _ in nil }
    #expect(throws: RegistrationError.duplicateFallback) { try fresh.registerFallback { _ in nil } }
  }

  @Test("update keeps next run, attempt and results but takes the new definition")
  func updatePolicy() async throws {
    let job = id("test.update.periodic")
    let worker = RecordingWorker(.retry, .success)
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, input: ["v": .int(1)], interval: .seconds(3600),
        backoff: .linear(initialDelay: .seconds(100))))
    await h.waitFor(job) { $0.isRetryScheduled }
    let before = try #require(h.task(job))
    #expect(before.attempt == 1)

    let outcome = await h.backgrounder.schedule(
      WorkRequest.Periodic(
        taskId: job, input: ["v": .int(2)], interval: .seconds(7200), budget: .seconds(30)),
      policy: .update)
    #expect(outcome == .scheduled)
    let after = try #require(h.task(job))
    #expect(after.attempt == 1)
    #expect(after.nextRunHint == before.nextRunHint)
    #expect(after.lastResult == .retry)
    let stored = try #require(try await h.backgrounder.storedTasks().first { $0.id == job })
    #expect(stored.input.int("v") == 2)

    // The retry runs with the new definition; success then schedules now + the new interval.
    h.clock.advance(by: .seconds(100))
    await h.waitFor(job, count: 2) { $0.isWorkCompleted }
    #expect(worker.contexts.last?.input.int("v") == 2)
    #expect(worker.contexts.last?.budget == .seconds(30))
    #expect(h.task(job)?.nextRunHint == h.at(100 + 7200))
  }

  @Test("update of a task of the other kind replaces it; update of nothing schedules")
  func updateFallsBackToSchedule() async throws {
    let job = id("test.update.kind")
    let h = try await Harness.start(workers: [job: RecordingWorker(.success)])
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, interval: .seconds(3600)), policy: .update) == .scheduled)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, initialDelay: .seconds(50)), policy: .update)
        == .scheduled)
    #expect(h.task(job)?.kind == .oneTime)
    #expect(h.task(job)?.nextRunHint == h.at(50))
  }

  @Test("storedTasks lists finished one-time tasks with their input")
  func storedTasksIncludeFinished() async throws {
    let job = id("test.stored.once")
    let h = try await Harness.start(workers: [job: RecordingWorker(.failure(reason: "nope"))])
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, input: ["k": .string("v")]))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(h.task(job) == nil, "finished work is no longer scheduled")
    let stored = try await h.backgrounder.storedTasks()
    #expect(stored.map(\.id) == [job])
    #expect(stored.first?.state == .failed)
    #expect(stored.first?.lastReason == "nope")
    #expect(stored.first?.input.string("k") == "v")
  }

  @Test("an edit-only runtime accepts any id, persists it, and never invokes a worker")
  func editOnlyMode() async throws {
    let h = try await Harness.start(workers: [:], dispatchesWork: false)
    let job = id("test.edit.only")
    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    h.clock.advance(by: .seconds(3600))
    await h.driver.flush()
    #expect(h.events(job) { $0.isWorkStarted }.isEmpty)
    #expect(try await h.backgrounder.storedTasks().map(\.state) == [.pending])
    #expect(await h.backgrounder.cancel(job) == .cancelled(pendingCleared: true))
    #expect(try await h.backgrounder.storedTasks().isEmpty)
    await h.stop()
  }
}
