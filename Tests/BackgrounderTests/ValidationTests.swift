import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// The limits the reference library enforces: refused with a reason, never silently adjusted.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct ValidationTests {
  @Test(
    "a backoff initial delay outside 10 s…5 h is rejected, not clamped",
    arguments: [
      Duration.zero, .seconds(10) - .nanoseconds(1), .seconds(5 * 3600) + .nanoseconds(1),
    ]
  )
  func initialDelayOutsideRange(initial: Duration) async throws {
    let job = id("test.validation.backoff")
    let h = try await Harness.start(workers: [job: RecordingWorker()])

    for backoff in [
      BackoffPolicy.linear(initialDelay: initial), .exponential(initialDelay: initial),
    ] {
      let outcome = await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, backoff: backoff))
      #expect(
        outcome
          == .rejected(.invalidBackoff("initialDelay \(initial) is outside 10 seconds...5 hours")))
      let periodic = await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, interval: .seconds(3600), backoff: backoff))
      #expect(periodic == outcome)
    }
    #expect(try await h.status(job) == nil)
  }

  @Test("a backoff initial delay at either end of 10 s…5 h is accepted")
  func initialDelayAtLimits() async throws {
    let job = id("test.validation.limits")
    let h = try await Harness.start(workers: [job: RecordingWorker()])

    for initial in [BackoffPolicy.floor, BackoffPolicy.cap] {
      let request = WorkRequest.OneTime(
        taskId: job, initialDelay: .seconds(600), backoff: .linear(initialDelay: initial))
      #expect(await h.backgrounder.schedule(request) == .scheduled)
    }
    #expect(BackoffPolicy.allowedInitialDelay == .seconds(10) ... .seconds(5 * 3600))
  }

  @Test("an input with an empty key is rejected and nothing is stored")
  func emptyInputKey() async throws {
    let job = id("test.validation.input")
    let h = try await Harness.start(workers: [job: RecordingWorker()])

    let input: WorkInput = ["": .string("x"), "album": .string("Holidays")]
    #expect(input.hasEmptyKey)
    #expect(
      await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, input: input))
        == .rejected(.emptyInputKey))
    #expect(
      await h.backgrounder.schedule(
        WorkRequest.Periodic(taskId: job, input: input, interval: .seconds(3600)))
        == .rejected(.emptyInputKey))
    #expect(try await h.status(job) == nil)
    #expect(RejectionReason.emptyInputKey.description.contains("empty key"))

    let fine: WorkInput = ["album": .string("Holidays")]
    #expect(!fine.hasEmptyKey)
    #expect(
      await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, input: fine)) == .scheduled)
  }

  @Test("registering an empty list of task ids is an error and registers nothing")
  func emptyRegistration() throws {
    let backgrounder = Backgrounder(
      storePath: temporaryDirectory().appendingPathComponent("store.sqlite").path)
    #expect(throws: RegistrationError.noTaskIds) {
      try backgrounder.register([]) { _ in RecordingWorker() }
    }
    #expect(backgrounder.registeredTaskIds().isEmpty)
    // The registry is not sealed by the refusal.
    try backgrounder.register([id("test.validation.one")]) { _ in RecordingWorker() }
    #expect(backgrounder.registeredTaskIds() == [id("test.validation.one")])
  }
}
