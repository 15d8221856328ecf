import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct BackoffTests {
  private func seconds(_ policy: BackoffPolicy, attempts: Range<Int>) -> [Double] {
    attempts.map { Double(policy.delay(afterAttempt: $0).components.seconds) }
  }

  @Test("exponential: 30 s doubling, capped at 5 h")
  func exponential() {
    #expect(
      seconds(.exponential(), attempts: 0..<12)
        == [30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 18000, 18000])
  }

  @Test("linear: 30 s steps; a large initial delay is capped at 5 h")
  func linear() {
    #expect(seconds(.linear(), attempts: 0..<5) == [30, 60, 90, 120, 150])
    #expect(
      seconds(.linear(initialDelay: .seconds(3600)), attempts: 0..<7)
        == [3600, 7200, 10800, 14400, 18000, 18000, 18000])
  }

  @Test("every delay is at least the 10 s floor")
  func floor() {
    #expect(
      seconds(.exponential(initialDelay: .seconds(1)), attempts: 0..<6) == [10, 10, 10, 10, 16, 32])
    #expect(
      seconds(.linear(initialDelay: .seconds(2)), attempts: 0..<6) == [10, 10, 10, 10, 10, 12])
  }

  @Test("jitter removes at most its fraction and never goes below the floor")
  func jitter() {
    let policy = BackoffPolicy.exponential(jitter: 0.5)
    #expect(policy.delay(afterAttempt: 2, jitterSample: 0) == .seconds(120))
    #expect(policy.delay(afterAttempt: 2, jitterSample: 0.5) == .seconds(90))
    #expect(policy.delay(afterAttempt: 0, jitterSample: 0.99) >= .seconds(10))
    for sample in stride(from: 0.0, to: 1.0, by: 0.05) {
      let delay = policy.delay(afterAttempt: 3, jitterSample: sample)
      #expect(delay <= .seconds(240) && delay > .seconds(120))
    }
  }

  @Test("maxAttempts must be within 1...30")
  func attemptsRange() {
    #expect(BackoffPolicy.exponential(maxAttempts: 0).problem != nil)
    #expect(BackoffPolicy.exponential(maxAttempts: 31).problem != nil)
    #expect(BackoffPolicy.exponential(maxAttempts: 1).problem == nil)
    #expect(BackoffPolicy.linear(maxAttempts: 30).problem == nil)
  }

  @Test(
    "a retrying worker follows the policy's delays and fails after the last attempt",
    arguments: [
      (BackoffPolicy.linear(initialDelay: .seconds(30), maxAttempts: 4), [30.0, 60, 90]),
      (BackoffPolicy.exponential(initialDelay: .seconds(30), maxAttempts: 4), [30.0, 60, 120]),
    ])
  func retrySequence(policy: BackoffPolicy, delays: [Double]) async throws {
    let job = id("test.backoff.sequence")
    let worker = RecordingWorker(.retry)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, backoff: policy))
    for (index, delay) in delays.enumerated() {
      let retries = await h.waitFor(job, count: index + 1) { $0.isRetryScheduled }
      #expect(retries.last?.kind == .retryScheduled(nextAttempt: index + 1, delay: .seconds(delay)))
      h.clock.advance(by: .seconds(delay))
    }
    await h.waitFor(job, count: 4) { $0.isWorkCompleted }
    #expect(worker.attempts == [0, 1, 2, 3])
    let status = try #require(try await h.status(job))
    #expect(status.state == .failed)
    #expect(status.lastResult == .failure)
    #expect(status.lastReason?.contains("retries exhausted after 4 attempts") == true)
    #expect(h.task(job) == nil)
  }
}
