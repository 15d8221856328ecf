import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// The hook decisions (issue 40, findings 8 and 9): one running and one waiting hook per job,
/// later events coalesced with a count, jobs' hooks concurrent up to a limit, a bounded queue,
/// deadlines from the injected time, and a stop that cancels what waits.
@Suite struct HookScheduleTests {
  private let t0 = WallInstant(Date(timeIntervalSince1970: 1_700_000_000))
  private let flaky = try! TaskId("dev.example.flaky")
  private let backup = try! TaskId("dev.example.backup")

  private func failure(_ job: TaskId, _ reason: String = "exit status 1") -> AlertHooks.Call {
    AlertHooks.Call(
      argv: ["/usr/local/bin/alert"], job: job, result: "failure", reason: reason,
      lastSuccessAt: nil)
  }

  @Test func aFlakyJobsFailuresCoalesceAndAnotherJobsHookStillStarts() {
    var schedule = HookSchedule()
    guard case .start(let first) = schedule.submit(failure(flaky, "run 0"), now: t0) else {
      Issue.record("the first hook did not start")
      return
    }
    #expect(first.call.coalesced == 0)
    // One failure a second for an hour while its 5-minute hook runs: one hook waits.
    #expect(schedule.submit(failure(flaky, "run 1"), now: t0) == .queued)
    for second in 2...3600 {
      let now = t0.advanced(by: .seconds(second))
      #expect(schedule.submit(failure(flaky, "run \(second)"), now: now) == .coalesced(second - 1))
    }
    #expect(schedule.pendingCount == 1)
    // Another job's failure hook starts at once, beside the flaky one's.
    let now = t0.advanced(by: .seconds(3600))
    #expect(
      schedule.submit(failure(backup), now: now)
        == .start(.init(call: failure(backup), deadline: now.advanced(by: .seconds(300)))))
    // The flaky hook ends: the waiting one starts, with the newest reason and the count.
    let starts = schedule.finished(flaky, now: now)
    #expect(starts.count == 1)
    #expect(starts.first?.call.reason == "run 3600")
    #expect(starts.first?.call.coalesced == 3599)
    #expect(starts.first?.deadline == now.advanced(by: .seconds(300)))
    #expect(schedule.pendingCount == 0)
  }

  @Test func hooksOfDifferentJobsRunUpToTheLimitTheRestWaitInOrder() throws {
    var schedule = HookSchedule(limits: .init(concurrent: 2, pending: 10))
    let jobs = try (0..<4).map { try TaskId("dev.example.job\($0)") }
    #expect(schedule.submit(failure(jobs[0]), now: t0) != .queued)
    #expect(schedule.submit(failure(jobs[1]), now: t0) != .queued)
    #expect(schedule.submit(failure(jobs[2]), now: t0) == .queued)
    #expect(schedule.submit(failure(jobs[3]), now: t0) == .queued)
    #expect(schedule.running.count == 2)
    let later = t0.advanced(by: .milliseconds(5))
    #expect(schedule.finished(jobs[1], now: later).map(\.call.job) == [jobs[2]])
    #expect(schedule.finished(jobs[0], now: later).map(\.call.job) == [jobs[3]])
    #expect(schedule.finished(jobs[2], now: later).isEmpty)
  }

  @Test func aJobsStaleAndFailureHooksWaitApartAndRunOneAtATime() {
    var schedule = HookSchedule()
    var stale = failure(flaky)
    stale.result = "stale"
    #expect(schedule.submit(failure(flaky), now: t0) != .queued)
    #expect(schedule.submit(stale, now: t0) == .queued)
    #expect(schedule.submit(failure(flaky), now: t0) == .queued)
    #expect(schedule.pending(flaky, "stale") == stale)
    // One at a time, in arrival order.
    #expect(schedule.finished(flaky, now: t0).map(\.call.result) == ["stale"])
    #expect(schedule.finished(flaky, now: t0).map(\.call.result) == ["failure"])
    #expect(schedule.finished(flaky, now: t0).isEmpty)
  }

  @Test func aFullQueueDropsTheNewHook() throws {
    var schedule = HookSchedule(limits: .init(concurrent: 1, pending: 2))
    let jobs = try (0..<4).map { try TaskId("dev.example.job\($0)") }
    #expect(schedule.submit(failure(jobs[0]), now: t0) != .queued)
    #expect(schedule.submit(failure(jobs[1]), now: t0) == .queued)
    #expect(schedule.submit(failure(jobs[2]), now: t0) == .queued)
    #expect(schedule.submit(failure(jobs[3]), now: t0) == .dropped)
    // Coalescing into a waiting hook needs no room.
    #expect(schedule.submit(failure(jobs[1]), now: t0) == .coalesced(1))
    #expect(schedule.pendingCount == 2)
  }

  @Test func stopCancelsWaitingHooksNamesTheRunningOnesAndStartsNothingMore() {
    var schedule = HookSchedule()
    _ = schedule.submit(failure(flaky), now: t0)
    _ = schedule.submit(failure(backup), now: t0)
    _ = schedule.submit(failure(flaky), now: t0)
    #expect(schedule.stop() == .init(cancelled: 1, running: [backup, flaky]))
    #expect(schedule.pendingCount == 0)
    #expect(schedule.finished(flaky, now: t0).isEmpty)
    #expect(schedule.submit(failure(flaky), now: t0) == .stopping)
    #expect(schedule.running.keys.sorted { $0.rawValue < $1.rawValue } == [backup])
  }

  @Test func theBudgetCountsFromTheStartOnTheGivenTime() {
    var schedule = HookSchedule(limits: .init(budget: .milliseconds(1500)))
    let now = t0.advanced(by: .milliseconds(250))
    guard case .start(let start) = schedule.submit(failure(flaky), now: now) else {
      Issue.record("the hook did not start")
      return
    }
    #expect(start.deadline == t0.advanced(by: .milliseconds(1750)))
    #expect(schedule.running[flaky] == start.deadline)
  }

  @Test func theHookIsToldHowManyEventsItStandsFor() {
    var call = failure(flaky)
    call.coalesced = 41
    let hooks = AlertHooks(
      runner: CommandRunner(logger: .init(label: "test")), logger: .init(label: "test"),
      daemonEnvironment: [:])
    #expect(hooks.environment(for: call)["BACKGROUNDER_COALESCED"] == "41")
    #expect(hooks.environment(for: failure(flaky))["BACKGROUNDER_COALESCED"] == "0")
  }
}
