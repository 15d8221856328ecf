import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import TestSupport
import Testing

/// ``ConditionLossPolicy/pause(max:)`` through the runtime, driven by the test kit's fake
/// network and manual clock: the worker's pause handler is told to freeze and thaw, the budget
/// clock stands still while paused, a pause past its max stops the run (thawed first), and a
/// worker that cannot pause is stopped.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct PauseConditionLossTests {
  /// A ``BlockingWorker`` that takes pauses, recording what it was told.
  final class PausableWorker: Worker {
    let inner = BlockingWorker()
    private let state = Lock<
      (told: [PauseChange], waiters: [(Int, CheckedContinuation<Void, Never>)])
    >(
      ([], []))
    var told: [PauseChange] { state.withLock { $0.told } }

    func execute(_ context: WorkContext) async -> WorkResult {
      context.handlePauses { change in
        let ready = self.state.withLock { state in
          state.told.append(change)
          let count = state.told.count
          defer { state.waiters.removeAll { $0.0 <= count } }
          return state.waiters.filter { $0.0 <= count }.map(\.1)
        }
        for waiter in ready { waiter.resume() }
      }
      return await inner.execute(context)
    }

    /// Waits until the worker was told `count` changes.
    func waitUntilTold(_ count: Int) async {
      await withCheckedContinuation { continuation in
        let ready = state.withLock { state -> Bool in
          if state.told.count >= count { return true }
          state.waiters.append((count, continuation))
          return false
        }
        if ready { continuation.resume() }
      }
    }
  }

  /// A ``BlockingWorker`` that observes its pauses (``WorkContext/observePauses(_:)``), and
  /// takes them too when `pausable`, recording both in one list.
  final class ObservedWorker: Worker {
    let inner = BlockingWorker()
    let pausable: Bool
    let log = Lock<[String]>([])

    init(pausable: Bool) { self.pausable = pausable }

    func execute(_ context: WorkContext) async -> WorkResult {
      context.observePauses { self.record("observer", $0) }
      if pausable { context.handlePauses { self.record("handler", $0) } }
      return await inner.execute(context)
    }

    private func record(_ who: String, _ change: PauseChange) {
      let what =
        switch change {
        case .pause: "pause"
        case .resume: "resume"
        }
      log.withLock { $0.append("\(who) \(what)") }
    }
  }

  private func request(_ job: TaskId, pauseMax: Duration) -> WorkRequest.OneTime {
    var constraints = WorkConstraints(networkRequired: .unmetered)
    constraints.onConditionLost = .pause(max: pauseMax)
    return WorkRequest.OneTime(taskId: job, constraints: constraints, budget: .seconds(600))
  }

  @Test("paused on a metered link, thawed when unmetered, budget clock stopped meanwhile")
  func pauseAndResume() async throws {
    let job = id("test.pause.resume")
    let worker = PausableWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(3600)))
    await worker.inner.waitUntilInvoked()
    await h.clock.waitForSleepers(until: h.at(600))

    h.clock.advance(by: .seconds(60))
    h.network.set(.metered)
    await h.waitFor(job) { $0 == .workPaused(attempt: 0, reason: .networkMetered) }
    await worker.waitUntilTold(1)
    #expect(worker.told == [.pause(.networkMetered)])
    let paused = try #require(try await h.status(job))
    #expect(paused.displayedState == "paused")
    #expect(paused.pauseReason == .networkMetered)
    let since = try #require(paused.pausedSince)
    #expect(abs(since.timeIntervalSince(h.at(60))) < 0.001)

    // Past the 10 min budget while paused: not expired.
    h.clock.advance(by: .seconds(840))
    h.network.set(.unmetered)
    await h.waitFor(job) { $0 == .workResumed(attempt: 0, paused: .seconds(840)) }
    await worker.waitUntilTold(2)
    #expect(worker.told == [.pause(.networkMetered), .resume])
    // The budget runs out 600 s of running after the start: 14 min later than without pause.
    await h.clock.waitForSleepers(until: h.at(600 + 840))
    #expect(h.events(job) { $0 == .attemptFailed(reason: .expired) }.isEmpty)

    worker.inner.release()
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.inner.invocations == 1)
    let done = try #require(try await h.status(job))
    #expect(done.lastResult == .success)
    #expect(done.displayedState == "succeeded")
    let history = done.recentRuns
    #expect(history.map(\.outcome) == ["success", "resumed", "paused"])
    #expect(history.allSatisfy { $0.attempt == 0 })
  }

  @Test("paused past pause-max: thawed, then stopped for the lost condition, no attempt used")
  func pauseMaxStops() async throws {
    let job = id("test.pause.max")
    let worker = PausableWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(300)))
    await worker.inner.waitUntilInvoked()
    h.network.set(.metered)
    await h.waitFor(job) { $0 == .workPaused(attempt: 0, reason: .networkMetered) }
    await worker.waitUntilTold(1)
    await h.clock.waitForSleepers(until: h.at(300))
    h.clock.advance(by: .seconds(300))
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkMetered) }
    // Thawed before it was cancelled: told before the run ended.
    #expect(worker.told == [.pause(.networkMetered), .resume])
    #expect(worker.inner.stopReasons == [.networkMetered])
    #expect(try await h.status(job)?.attempt == 0)
  }

  @Test("a worker that takes no pauses is stopped as before")
  func unpausableWorkerStops() async throws {
    let job = id("test.pause.unpausable")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(300)))
    await worker.waitUntilInvoked()
    h.network.set(.metered)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkMetered) }
    #expect(worker.stopReasons == [.networkMetered])
  }

  @Test("a pause observer is told after the handler froze the work and before it thaws it")
  func observerOrder() async throws {
    let job = id("test.pause.observed")
    let worker = ObservedWorker(pausable: true)
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(3600)))
    await worker.inner.waitUntilInvoked()
    h.network.set(.metered)
    #expect(await waitUntil { worker.log.withLock { $0.count == 2 } })
    h.network.set(.unmetered)
    #expect(await waitUntil { worker.log.withLock { $0.count == 4 } })
    #expect(
      worker.log.withLock { $0 }
        == ["handler pause", "observer pause", "observer resume", "handler resume"])
  }

  @Test("observing pauses does not make a run pausable: it is stopped, the observer told nothing")
  func observerAloneIsStopped() async throws {
    let job = id("test.pause.observer-alone")
    let worker = ObservedWorker(pausable: false)
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(300)))
    await worker.inner.waitUntilInvoked()
    h.network.set(.metered)
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkMetered) }
    #expect(worker.inner.stopReasons == [.networkMetered])
    #expect(worker.log.withLock { $0 }.isEmpty)
  }

  @Test("a run's pause and start closures, which capture its context, are let go when it ends")
  func pauseClosuresAreFreedAfterTheRun() async throws {
    /// Captured with the context by a pause handler and observers (a start observer that
    /// never fires: the run never confirms its start); weakly held here.
    final class Captured: Sendable {}
    final class CapturingWorker: Worker {
      private let captured = Lock<[Weak]>([])
      struct Weak: @unchecked Sendable { weak var object: Captured? }
      var alive: Int { captured.withLock { $0.filter { $0.object != nil }.count } }
      var seen: Int { captured.withLock { $0.count } }

      func execute(_ context: WorkContext) async -> WorkResult {
        let object = Captured()
        captured.withLock { $0.append(Weak(object: object)) }
        context.handlePauses { _ in _ = (object, context) }
        context.observePauses { _ in _ = (object, context) }
        context.observeConfirmedStart { _ = (object, context) }
        return .success
      }
    }
    let job = id("test.pause.freed")
    let worker = CapturingWorker()
    let h = try await Harness.start(workers: [job: worker])
    _ = await h.backgrounder.schedule(request(job, pauseMax: .seconds(300)))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.seen == 1)
    // Kept, they kept the run's handle, the context and all they hold, for every run.
    #expect(await waitUntil { worker.alive == 0 }, "the closures outlived the run")
  }

  /// The harness's clock starts at 22:13:20 UTC: the run starts in its window 22:00–23:00.
  @Test("a window end pauses the run of a pausing task; the next opening thaws the same run")
  func windowEndPausesUntilTheNextOpening() async throws {
    let job = id("test.pause.window")
    let worker = PausableWorker()
    let h = try await Harness.start(workers: [job: worker])
    var constraints = WorkConstraints(windows: [try TimeWindow("22:00-23:00")], windowEnd: .stop)
    constraints.onConditionLost = .pause(max: .seconds(2 * 86_400))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: constraints, budget: .seconds(7200)))
    await worker.inner.waitUntilInvoked()

    let closes = h.at(2800)
    await h.clock.waitForSleepers(until: closes)
    h.clock.advance(to: WallInstant(closes))
    await h.waitFor(job) { $0 == .workPaused(attempt: 0, reason: .windowClosed) }
    await worker.waitUntilTold(1)
    #expect(worker.told == [.pause(.windowClosed)])

    let opens = h.at(2800 + 23 * 3600)
    await h.clock.waitForSleepers(until: opens)
    h.clock.advance(to: WallInstant(opens))
    await h.waitFor(job) { $0 == .workResumed(attempt: 0, paused: .seconds(23 * 3600)) }
    await worker.waitUntilTold(2)
    #expect(worker.told == [.pause(.windowClosed), .resume])
    worker.inner.release()
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.inner.invocations == 1)
  }
}
