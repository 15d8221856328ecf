import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// `systemSleeping`: the named runs stop as a retry "system suspending" without using an
/// attempt, others go on, nothing starts until the system is back, then due work runs at once.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct SystemSleepTests {
  @Test func namedRunsStopNothingStartsUntilResume() async throws {
    let stopped = id("test.sleep.delay")
    let kept = id("test.sleep.block")
    let stoppedWorker = BlockingWorker()
    let keptWorker = BlockingWorker()
    let h = try await Harness.start(workers: [stopped: stoppedWorker, kept: keptWorker])
    defer {
      keptWorker.release()
      Task { await h.stop() }
    }
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: stopped))
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: kept))
    await stoppedWorker.waitUntilInvoked()
    await keptWorker.waitUntilInvoked()

    h.backgrounder.systemSleeping(true, stopping: [stopped])
    await h.waitFor(stopped) { $0 == .workStopped(attempt: 0, reason: .systemSuspending) }
    #expect(stoppedWorker.stopReasons == [.systemSuspending])
    await h.driver.flush()
    let status = try #require(try await h.status(stopped))
    #expect(status.lastReason == "system suspending")
    #expect(status.attempt == 0)
    #expect(stoppedWorker.invocations == 1, "nothing starts while the system sleeps")
    #expect(keptWorker.cancelledRuns == 0, "a run not named goes on")

    h.backgrounder.systemSleeping(false)
    await h.waitFor(stopped) { $0.isWorkCompleted }
    #expect(stoppedWorker.invocations == 2)
  }
}
