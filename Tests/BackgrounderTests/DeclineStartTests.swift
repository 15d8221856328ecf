import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Testing

/// ``WorkContext/declineStart(reason:)``: a worker that cannot start for a condition of its own
/// (the daemon: a `bandwidth-required` cap it cannot enforce) gives the run back without using
/// an attempt, as a deferral with the task's backoff — so a task whose attempts would run out
/// waits instead of failing.
@Suite(.stopsRuntimes, .timeLimit(.minutes(1)))
struct DeclineStartTests {
  @Test("declined twice, one attempt allowed: deferrals with backoff, no attempt used, success")
  func declinedStartsUseNoAttempt() async throws {
    let job = id("test.decline.cap")
    let declines = Lock(2)
    let worker = ClosureWorker { context in
      let decline = declines.withLock { count -> Bool in
        guard count > 0 else { return false }
        count -= 1
        return true
      }
      if decline {
        context.declineStart(reason: "bandwidth-required: the cap cannot be enforced (test)")
        // Ignored: the run ended when the worker declined.
        return .failure(reason: "not recorded")
      }
      return .success
    }
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job, backoff: .linear(initialDelay: .seconds(30), maxAttempts: 1)))
    for deferral in 1...2 {
      let retries = await h.waitFor(job, count: deferral) { $0.isRetryScheduled }
      #expect(
        retries.last?.kind
          == .retryScheduled(nextAttempt: 0, delay: .seconds(30 * Double(deferral))))
      let task = try #require(h.task(job))
      #expect(task.state == .backoff)
      #expect(task.attempt == 0)
      #expect(task.deferrals == deferral)
      #expect(task.lastReason == "bandwidth-required: the cap cannot be enforced (test)")
      h.clock.advance(by: .seconds(30 * Double(deferral)))
    }
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(h.events(job) { $0 == .attemptDeferred(reason: .workerDeclined) }.count == 2)
    let status = try #require(try await h.status(job))
    #expect(status.state == .succeeded, "a counted retry would have failed it (maxAttempts 1)")
    #expect(status.attempt == 0)
    #expect(status.recentRuns.map(\.outcome) == ["success", "deferred", "deferred"])
    #expect(
      status.recentRuns.last?.reason == "bandwidth-required: the cap cannot be enforced (test)")
  }
}
