import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct NetworkGateTests {
  @Test(
    "the gate waits exactly min(5 s, budget/4), then retries without invoking; the retry runs as soon as the network returns",
    arguments: [
      (budget: 8, gate: 2), (budget: 12, gate: 3), (budget: 20, gate: 5), (budget: 600, gate: 5),
    ])
  func gateTimeout(budget: Int, gate: Int) async throws {
    let job = id("test.gate.job")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: .offline)

    let request = WorkRequest.OneTime(
      taskId: job, constraints: .init(networkRequired: .any), budget: .seconds(budget))
    #expect(await h.backgrounder.schedule(request) == .scheduled)

    await h.clock.waitForSleepers(until: h.at(Double(gate)))
    let waiting = try #require(h.task(job))
    #expect(waiting.state == .blocked)
    #expect(waiting.pendingPredicates == [.networkRequired(.any)])

    // One nanosecond short of the gate: nothing may fire.
    h.clock.advance(by: .seconds(gate) - .nanoseconds(1))
    #expect(h.clock.sleeperDeadlines.contains(h.at(Double(gate))))
    #expect(h.events(job) { if case .attemptDeferred = $0 { true } else { false } }.isEmpty)

    h.clock.advance(by: .nanoseconds(1))
    let deferred = await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(deferred[0].time == h.at(Double(gate)))
    let retry = await h.waitFor(job) { $0.isRetryScheduled }
    #expect(retry[0].kind == .retryScheduled(nextAttempt: 0, delay: .seconds(30)))
    #expect(worker.invocations == 0)

    let backingOff = try #require(h.task(job))
    #expect(backingOff.state == .backoff)
    #expect(backingOff.deferrals == 1)
    #expect(backingOff.attempt == 0)
    #expect(backingOff.lastResult == .retry)
    #expect(backingOff.pendingPredicates.contains(.networkRequired(.any)))
    #expect(
      backingOff.pendingPredicates.contains(.waitingForBackoff(until: h.at(Double(gate + 30)))))

    // The network returns: re-armed at once, without waiting out the 30 s backoff.
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(worker.attempts == [0])
    #expect(h.clock.date == h.at(Double(gate)))
    let status = try #require(try await h.status(job))
    #expect(status.state == .succeeded)
    #expect(status.deferrals == 0)
    #expect(status.recentRuns.map(\.outcome) == ["success", "deferred"])
  }

  @Test(
    "unmetered work does not run on a metered link and runs within one dispatch after an unmetered link appears"
  )
  func unmetered() async throws {
    let job = id("test.gate.unmetered")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: .metered)

    #expect(
      await h.backgrounder.schedule(
        WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
        == .scheduled)
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)

    // Still metered (another metered link): the deferred work stays put.
    h.network.set(NetworkConditions(isReachable: true, isDataMetered: true, primaryLink: "wwan1"))
    await h.driver.flush()
    #expect(try #require(h.task(job)).pendingPredicates.contains(.networkRequired(.unmetered)))

    h.network.set(NetworkConditions(isReachable: true, isDataMetered: false, primaryLink: "eth0"))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(h.clock.date == h.at(5))
  }

  @Test("a gate waiting on the network is released the moment the requirement is met")
  func gateReleasedByNetwork() async throws {
    let job = id("test.gate.release")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: .metered)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await h.clock.waitForSleepers(until: h.at(5))
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(h.events(job) { if case .attemptDeferred = $0 { true } else { false } }.isEmpty)
  }

  @Test("deferrals never consume attempts: a long outage does not turn work into a failure")
  func deferralsDoNotConsumeAttempts() async throws {
    let job = id("test.gate.weekend")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: .offline)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job, constraints: .init(networkRequired: .any),
        backoff: .linear(initialDelay: .seconds(30), maxAttempts: 2)))
    var expectedDelay = 0.0
    for deferral in 1...5 {
      // Gate (5 s) then deferral backoff: linear 30 s × deferral count.
      await h.clock.waitForSleepers(until: h.clock.date.addingTimeInterval(5))
      h.clock.advance(by: .seconds(5))
      let retries = await h.waitFor(job, count: deferral) { $0.isRetryScheduled }
      expectedDelay = 30 * Double(deferral)
      #expect(retries.last?.kind == .retryScheduled(nextAttempt: 0, delay: .seconds(expectedDelay)))
      #expect(h.task(job)?.deferrals == deferral)
      h.clock.advance(by: .seconds(expectedDelay))
    }
    #expect(worker.invocations == 0)
    #expect(h.task(job)?.attempt == 0)
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(try await h.status(job)?.state == .succeeded)
  }
}
