import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// Wall-clock steps (NTP, `date -s`) and resumes, driven by the manual clock's `jump(by:)`:
/// the dispatch loop's sleep does not notice a jump (it is measured on a monotonic clock), the
/// clock-change source does.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3))) struct ClockChangeTests {
  @Test("a clock step past a due time runs the task at once")
  func forwardStepRunsDueTask() async throws {
    let job = id("test.clock.forward")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], watchesClockChanges: true)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, initialDelay: .seconds(3600)))
    await h.clock.waitForSleepers(until: h.at(3600))

    // No sleeper is woken: only the clock-change source can make the loop look again.
    h.clock.jump(by: .seconds(2 * 3600))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
    #expect(h.clock.sleeperDeadlines.contains(h.at(3600)) == false)
  }
}
