import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct PowerConstraintTests {
  @Test("charging work blocks on battery without using an attempt and runs when power returns")
  func chargingBlocksAndReleases() async throws {
    let job = id("test.power.charging")
    let worker = RecordingWorker(.success)
    let onBattery = PowerConditions(isCharging: false, isBatteryNotLow: true)
    let h = try await Harness.start(workers: [job: worker], power: onBattery)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    let blocked = try #require(h.task(job))
    #expect(blocked.state == .blocked)
    #expect(blocked.pendingPredicates == [.requiresCharging])
    #expect(blocked.attempt == 0)
    #expect(worker.invocations == 0)
    let stored = try #require(try await h.status(job))
    #expect(stored.state == .blocked)
    #expect(stored.pendingPredicates == [.requiresCharging])

    h.power.set(.externalPower)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(worker.attempts == [0])
    #expect(h.clock.date == h.t0)
  }

  @Test("battery-not-low work blocks while the battery is low")
  func batteryNotLow() async throws {
    let job = id("test.power.battery")
    let worker = RecordingWorker(.success)
    let low = PowerConditions(isCharging: false, isBatteryNotLow: false)
    let h = try await Harness.start(workers: [job: worker], power: low)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresBatteryNotLow: true)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .batteryNotLowNotMet) }
    #expect(worker.invocations == 0)
    // Charging alone does not satisfy battery-not-low.
    h.power.set(PowerConditions(isCharging: true, isBatteryNotLow: false))
    await h.driver.flush()
    #expect(h.task(job)?.state == .blocked)
    h.power.set(PowerConditions(isCharging: false, isBatteryNotLow: true))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("unplugging the charger mid-run stops the worker with a reason; the run becomes a retry")
  func chargerUnpluggedMidRun() async throws {
    let job = id("test.power.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await h.waitFor(job) { $0.isWorkStarted }
    await worker.waitUntilInvoked()
    h.power.set(PowerConditions(isCharging: false, isBatteryNotLow: true))
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .chargerDisconnected) }
    #expect(worker.stopReasons == [.chargerDisconnected])
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    let task = try #require(h.task(job))
    #expect(task.state == .blocked)
    #expect(task.attempt == 0)
    #expect(task.lastResult == .retry)

    h.power.set(.externalPower)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 2)
  }

  @Test("losing the unmetered link mid-run stops the worker; it resumes when the link returns")
  func meteredMidRun() async throws {
    let job = id("test.network.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(networkRequired: .unmetered)))
    await h.waitFor(job) { $0.isWorkStarted }
    await worker.waitUntilInvoked()
    h.network.set(.metered)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkMetered) }
    #expect(worker.stopReasons == [.networkMetered])
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 2)
    #expect(try await h.status(job)?.state == .succeeded)
  }
}
