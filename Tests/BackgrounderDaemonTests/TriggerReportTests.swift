import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// What `trigger` answers once the run it asked for starts, or does not.
struct TriggerReportTests {
  private let id = try! TaskId("dev.test.once")

  /// A finished one-time job triggered again is said to run once more whether or not its run
  /// started before the trigger asked: the start's report used to replace what the trigger
  /// said (CI saw "triggered ID: attempt 0 started" where the same trigger, a moment later, says
  /// the job had finished).
  @Test func theStartIsReportedAfterWhatTheTriggerSaid() async {
    let (events, continuation) = AsyncStream.makeStream(of: MonitorEvent.self)
    continuation.yield(MonitorEvent(taskId: id, time: Date(), kind: .workStarted(attempt: 0)))
    let response = await TriggerReport.wait(
      for: id, triggered: "triggered \(id) (it had finished; running it once more)",
      in: events, timeout: .seconds(60))
    #expect(response.ok)
    #expect(
      response.message
        == "triggered dev.test.once (it had finished; running it once more): attempt 0 started")
  }

  @Test func noStartYetSaysWhenItStarts() async {
    let (events, continuation) = AsyncStream.makeStream(of: MonitorEvent.self)
    continuation.finish()
    let response = await TriggerReport.wait(
      for: id, triggered: "triggered \(id)", in: events, timeout: .milliseconds(1))
    #expect(response.ok)
    #expect(response.message == "triggered dev.test.once: it starts when a run slot is free")
  }
}
