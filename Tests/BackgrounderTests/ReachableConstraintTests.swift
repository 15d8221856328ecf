import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct ReachableConstraintTests {
  static let nas = "nas.lan:445"
  static let reachable = DestinationConditions(states: [nas: .reachable])
  static let refused = DestinationConditions(states: [nas: .unreachable(.refused)])

  @Test("a job that requires a destination waits until it is reachable, naming the failure")
  func heldUntilReachable() async throws {
    let job = id("test.reach.held")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiredReachable: Self.nas)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachableNotMet) }
    #expect(worker.invocations == 0)
    // Not checked yet (unknown) is not permission.
    #expect(
      try await h.status(job)?.pendingPredicates == [
        .reachable(destination: Self.nas, failure: nil)
      ])
    h.destinations.set(Self.refused)
    let expected: [PendingPredicate] = [.reachable(destination: Self.nas, failure: .refused)]
    var stored = try await h.status(job)?.pendingPredicates
    for _ in 0..<300 where stored != expected {
      try await Task.sleep(for: .milliseconds(10))
      await h.driver.flush()
      stored = try await h.status(job)?.pendingPredicates
    }
    #expect(stored == expected)
    #expect(worker.invocations == 0)

    h.destinations.set(Self.reachable)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("a destination lost mid-run stops the run as a retry; not checked yet stops nothing")
  func unreachableStops() async throws {
    let job = id("test.reach.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    h.destinations.set(Self.reachable)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiredReachable: Self.nas)))
    await worker.waitUntilInvoked()
    // A new network, not checked yet: unknown, the run goes on.
    h.destinations.set(.unconfigured)
    await h.driver.flush()
    #expect(worker.stopReasons.isEmpty)
    h.destinations.set(DestinationConditions(states: [Self.nas: .unreachable(.timedOut)]))
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .unreachable) }
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachableNotMet) }
    let task = try #require(h.task(job))
    #expect(task.state == .blocked)
    #expect(task.attempt == 0)
    #expect(task.lastResult == .retry)

    h.destinations.set(Self.reachable)
    await worker.waitUntilInvoked(count: 2)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
  }

  @Test("destination texts: host names, IPv4, bracketed IPv6, and what is refused")
  func parsing() throws {
    #expect(try Destination.parse("nas.lan:445").get() == Destination(host: "nas.lan", port: 445))
    #expect(try Destination.parse("10.0.0.7:22").get() == Destination(host: "10.0.0.7", port: 22))
    #expect(try Destination.parse("[::1]:445").get() == Destination(host: "::1", port: 445))
    for bad in ["nas.lan", "nas.lan:0", "nas.lan:70000", ":445", "::1:445", "[nas]:445", "[::1]"] {
      #expect((try? Destination.parse(bad).get()) == nil, "\(bad)")
    }
  }
}
