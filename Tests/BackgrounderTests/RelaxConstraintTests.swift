import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// ``WorkConstraints/relaxation`` through the runtime, driven by the test kit's fake network and
/// manual clock: an unmetered task waiting on a metered link runs there once it has waited its
/// `after`, and its worker sees ``WorkContext/relaxed``; the stored task said when it relaxes.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct RelaxConstraintTests {
  @Test("a task that waited its relax-after runs relaxed on a metered link, and its worker knows")
  func waitedOutRunsRelaxed() async throws {
    let job = id("test.relax.runtime")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(
      workers: [job: worker],
      network: NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan0"))
    var constraints = WorkConstraints(networkRequired: .unmetered)
    constraints.relaxation = .defaults(after: .seconds(3600), for: constraints)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, constraints: constraints))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    let waiting = try #require(try await h.status(job))
    let relaxesAt = try #require(waiting.relaxesAt)
    #expect(abs(relaxesAt.timeIntervalSince(h.at(3600))) < 0.001, "\(relaxesAt)")

    // Its retries come and go on the metered link; at the hour it runs relaxed.
    await h.clock.waitForSleepers { _ in true }
    h.clock.advance(to: WallInstant(h.at(3600)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(worker.contexts.map(\.relaxed) == [true])
  }
}
