import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// `requiresIdle` through the runtime with the test kit's ``FakeUserIdleSource`` and a manual
/// clock: the run waits for the user's idle time (a timer, no polling), and a run whose user
/// returns is stopped (`onUserReturn = .stop`) and waits again.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct UserIdleConstraintTests {
  @Test("held while unknown and while active; runs once idle for requiresIdle, not before")
  func waitsForTheIdleTime() async throws {
    let job = id("test.idle.runtime")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresIdle: .seconds(60))))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .userIdleNotMet) }
    h.userIdle.set(.active)
    await h.driver.flush()
    #expect(worker.invocations == 0)

    h.userIdle.set(UserIdleConditions(idleSince: h.at(0)))
    // The runtime sleeps until the user has been idle 60 s.
    await h.clock.waitForSleepers(until: h.at(60))
    h.clock.advance(to: WallInstant(h.at(59)))
    await h.clock.waitForSleepers(until: h.at(60))
    #expect(worker.invocations == 0)
    h.clock.advance(to: WallInstant(h.at(60)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("the user's return stops a run with onUserReturn = .stop, as a retry; it waits again")
  func returnStops() async throws {
    let job = id("test.idle.return")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    h.userIdle.set(UserIdleConditions(idleSince: h.at(-600)))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job, constraints: .init(requiresIdle: .seconds(60), onUserReturn: .stop)))
    await worker.waitUntilInvoked()
    h.userIdle.set(.active)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .userReturned) }
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .userIdleNotMet) }
    let task = try #require(h.task(job))
    #expect(task.state == .blocked)
    #expect(task.attempt == 0)
    #expect(
      task.pendingPredicates == [.userIdle(required: .seconds(60), idleSince: nil, unknown: nil)])
  }
}
