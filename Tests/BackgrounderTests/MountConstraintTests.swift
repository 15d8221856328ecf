import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct MountConstraintTests {
  static let mounted = MountConditions(mountPoints: ["/", "/media/backup"])
  static let unmounted = MountConditions(mountPoints: ["/"])

  @Test("a job that requires a mount is held until it is mounted, and says why")
  func heldUntilMounted() async throws {
    let job = id("test.mount.held")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker])

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiredMount: "/media/backup")))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .mountNotMet) }
    #expect(worker.invocations == 0)
    // Unknown (no answer yet) is not permission; known and absent neither.
    h.mounts.set(Self.unmounted)
    await h.driver.flush()
    #expect(worker.invocations == 0)
    let stored = try #require(try await h.status(job))
    #expect(stored.state == .blocked)
    #expect(stored.pendingPredicates == [.mounted(path: "/media/backup")])

    h.mounts.set(Self.mounted)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("blocked on power and a mount: status names what is still missing as each returns")
  func blockedOnPowerAndMount() async throws {
    let job = id("test.mount.power")
    let worker = RecordingWorker(.success)
    let onBattery = PowerConditions(isCharging: false, isBatteryNotLow: true)
    let h = try await Harness.start(
      workers: [job: worker], power: onBattery, mounts: Self.unmounted)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(
        taskId: job, constraints: .init(requiresCharging: true, requiredMount: "/media/backup")))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    #expect(
      try await h.status(job)?.pendingPredicates == [
        .requiresCharging, .mounted(path: "/media/backup"),
      ])
    h.power.set(.externalPower)
    // The change reaches the runtime asynchronously: wait (bounded) for the store to show it.
    let expected: [PendingPredicate] = [.mounted(path: "/media/backup")]
    var stored = try await h.status(job)?.pendingPredicates
    for _ in 0..<300 where stored != expected {
      try await Task.sleep(for: .milliseconds(10))
      await h.driver.flush()
      stored = try await h.status(job)?.pendingPredicates
    }
    #expect(stored == expected)
    #expect(worker.invocations == 0)
    h.mounts.set(Self.mounted)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("an unmount mid-run stops the run as a retry; the mount returning runs it again")
  func unmountStops() async throws {
    let job = id("test.mount.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker], mounts: Self.mounted)

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiredMount: "/media/backup")))
    await worker.waitUntilInvoked()
    h.mounts.set(.unconfigured)
    await h.driver.flush()
    #expect(worker.stopReasons.isEmpty)
    h.mounts.set(Self.unmounted)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .unmounted) }
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .mountNotMet) }
    let task = try #require(h.task(job))
    #expect(task.state == .blocked)
    #expect(task.attempt == 0)
    #expect(task.lastResult == .retry)

    h.mounts.set(Self.mounted)
    await worker.waitUntilInvoked(count: 2)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
  }
}
