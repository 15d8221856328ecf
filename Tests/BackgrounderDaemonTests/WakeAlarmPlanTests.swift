import Foundation
import Testing

@testable import Backgrounder
@testable import BackgrounderDaemon

/// The wake alarm goes off for the earliest future run of the `wake-system` jobs only.
@Suite struct WakeAlarmPlanTests {
  private let now = Date(timeIntervalSince1970: 1_800_000_000)

  private func task(_ id: String, _ state: TaskState, in seconds: TimeInterval?) throws
    -> ScheduledTask
  {
    ScheduledTask(
      taskId: try TaskId(id), kind: .oneTime, state: state,
      nextRunHint: seconds.map { now.addingTimeInterval($0) }, attempt: 0, deferrals: 0,
      ephemeral: false, pendingPredicates: [], lastResult: nil, lastReason: nil, progress: nil)
  }

  @Test func theEarliestWakeJobNotAnyJob() throws {
    let tasks = [
      try task("a.sooner", .pending, in: 60), try task("a.wake", .pending, in: 3600),
      try task("a.later", .pending, in: 7200),
    ]
    #expect(
      WakeAlarmPlan.alarm(for: tasks, wakeJobs: ["a.wake", "a.later"], now: now)
        == now.addingTimeInterval(3600))
  }

  @Test func noAlarmForRunningDueOrUnscheduledWork() throws {
    let tasks = [
      try task("a.running", .running, in: 60), try task("a.due", .pending, in: 0),
      try task("a.none", .blocked, in: nil),
    ]
    #expect(
      WakeAlarmPlan.alarm(for: tasks, wakeJobs: ["a.running", "a.due", "a.none"], now: now)
        == nil)
    #expect(WakeAlarmPlan.alarm(for: tasks, wakeJobs: [], now: now) == nil)
  }
}
