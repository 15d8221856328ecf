import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Testing

/// `Configuration.onWaitChange`: what a due task waits for, told when it changes (from the
/// dispatcher's writes, with the injected clock's time), for the time-waited metrics.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct WaitChangeTests {
  @Test("a task blocked on charging is told at its block and at its start, with the clock's times")
  func blockedThenStarted() async throws {
    let job = id("test.wait.charging")
    let worker = RecordingWorker(.success)
    let changes = Lock<[(TaskId, [PendingPredicate], Date)]>([])
    let h = try await Harness.start(
      workers: [job: worker], power: PowerConditions(isCharging: false, isBatteryNotLow: true),
      onWaitChange: { id, predicates, time in changes.withLock { $0.append((id, predicates, time)) }
      })

    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .chargingNotMet) }
    h.clock.advance(by: .seconds(90))
    h.power.set(.externalPower)
    await h.waitFor(job) { $0.isWorkCompleted }

    let seen = changes.withLock { $0 }
    #expect(seen.map(\.0) == [job, job])
    #expect(seen.map(\.1) == [[.requiresCharging], []])
    #expect(seen.map(\.2) == [h.t0, h.t0.addingTimeInterval(90)])
  }

  @Test("wait changes are told in the order they were made, though told outside the lock")
  func toldInOrder() async throws {
    let job = id("test.wait.order")
    let worker = RecordingWorker(.success)
    let changes = Lock<[[PendingPredicate]]>([])
    let telling = Lock(0)
    let charge = Lock<(@Sendable () -> Void)?>(nil)
    let h = try await Harness.start(
      workers: [job: worker], power: PowerConditions(isCharging: false, isBatteryNotLow: true),
      onWaitChange: { _, predicates, _ in
        telling.withLock { $0 += 1 }
        // At the block: the charger comes, and this change is held until the change that
        // start makes is being told too, or for a second. Told from its own step, that later
        // change came before this one; told in order, it waits for this one.
        if let plug = charge.withLock({ plug in
          defer { plug = nil }
          return plug
        }) {
          plug()
          let deadline = ContinuousClock.now.advanced(by: .seconds(1))
          while telling.withLock({ $0 }) < 2 && ContinuousClock.now < deadline { usleep(1000) }
        }
        changes.withLock { $0.append(predicates) }
      })
    charge.withLock { $0 = { h.power.set(.externalPower) } }
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: .init(requiresCharging: true)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(changes.withLock { $0 } == [[.requiresCharging], []])
  }
}
