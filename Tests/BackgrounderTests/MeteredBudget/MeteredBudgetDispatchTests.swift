import Backgrounder
import BackgrounderTesting
import Foundation
import Testing

/// `metered-budget`: an `unmetered` task may use a metered link until its budget (or the
/// shared one) is spent, then waits for an unmetered link, saying why; a run that crosses the
/// budget on a metered link is stopped as a lost condition. Driven with a ManualClock and the
/// test kit's fake network.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct MeteredBudgetDispatchTests {
  static let cellular = NetworkConditions(
    isReachable: true, isDataMetered: true, primaryLink: "wwan0")
  static let budget = MeteredBudget(bytes: 200_000_000, window: .trailing(seconds: 86_400))
  static let constraints = WorkConstraints(networkRequired: .unmetered, meteredBudget: budget)

  static func standing(used: Int64, at now: WallInstant, budget: MeteredBudget = budget)
    -> MeteredBudgetStanding
  {
    budget.standing(
      of: [MeteredUsageRecord(at: now.advanced(by: .seconds(-3600)), bytes: used)], at: now,
      zone: .utc)
  }

  @Test("under budget a metered link does; spent, it waits with the numbers; unmetered runs")
  func budgetLetsMeteredLinksUntilSpent() async throws {
    let job = id("test.budget.job")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.cellular)
    let now = h.clock.now

    // Spent: 212 MB of 200 MB used.
    h.backgrounder.meteredBudgetsChanged(
      MeteredBudgetStandings(tasks: [job: Self.standing(used: 212_000_000, at: now)]))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: Self.constraints))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    let waits = try #require(h.task(job)).pendingPredicates
    guard case .meteredBudget(let wait) = try #require(waits.first) else {
      Issue.record("waits for \(waits)")
      return
    }
    #expect(wait.used == 212_000_000)
    #expect(wait.budget == Self.budget)
    #expect(wait.freesBytes == 212_000_000)
    #expect(
      wait.phrase { _ in "09:12" }
        == "an unmetered network (metered budget 200 MB/1d used: 212 MB; 212 MB frees at 09:12)")
    let stored = try #require(try await h.status(job))
    #expect(stored.pendingPredicates.contains(.meteredBudget(wait)), "the store keeps the wait")

    // Freed: 150 MB used, the metered link does again.
    h.backgrounder.meteredBudgetsChanged(
      MeteredBudgetStandings(tasks: [job: Self.standing(used: 150_000_000, at: now)]))
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }

  @Test("a budgeted task with no standing does not use a metered link (unknown)")
  func unknownStandingIsNoPermission() async throws {
    let job = id("test.budget.unknown")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.cellular)
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: Self.constraints))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    #expect(try #require(h.task(job)).pendingPredicates.first == .networkRequired(.unmetered))
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
  }

  @Test("a run that crosses its budget on a metered link is stopped, no attempt used")
  func crossingTheBudgetMidRunStops() async throws {
    let job = id("test.budget.midrun")
    let worker = BlockingWorker()
    let h = try await Harness.start(workers: [job: worker], network: Self.cellular)
    let now = h.clock.now
    h.backgrounder.meteredBudgetsChanged(
      MeteredBudgetStandings(tasks: [job: Self.standing(used: 10_000_000, at: now)]))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: Self.constraints))
    await worker.waitUntilInvoked()
    h.backgrounder.meteredBudgetsChanged(
      MeteredBudgetStandings(tasks: [job: Self.standing(used: 200_000_000, at: now)]))
    await h.waitFor(job) { $0 == .workStopped(attempt: 0, reason: .networkMetered) }
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .constraintLost) }
    #expect(try #require(h.task(job)).attempt == 0)
    h.network.set(.unmetered)
    await worker.waitUntilInvoked(count: 2)
    worker.release()
    await h.waitFor(job) { $0.isWorkCompleted }
  }

  @Test("the shared budget spent: even `any` work waits for an unmetered link")
  func sharedBudgetHoldsAllNetworkWork() async throws {
    let job = id("test.budget.shared")
    let worker = RecordingWorker(.success)
    let h = try await Harness.start(workers: [job: worker], network: Self.cellular)
    let now = h.clock.now
    let shared = MeteredBudget(bytes: 2_000_000_000, window: .monthly(day: 1))
    h.backgrounder.meteredBudgetsChanged(
      MeteredBudgetStandings(
        daemon: Self.standing(used: 2_000_000_000, at: now, budget: shared)))
    _ = await h.backgrounder.schedule(
      WorkRequest.OneTime(taskId: job, constraints: WorkConstraints(networkRequired: .any)))
    await h.clock.waitForSleepers(until: h.at(5))
    h.clock.advance(by: .seconds(5))
    await h.waitFor(job) { $0 == .attemptDeferred(reason: .reachabilityTimeout) }
    #expect(worker.invocations == 0)
    guard case .meteredBudget(let wait) = try #require(h.task(job)).pendingPredicates.first
    else {
      Issue.record("not waiting for the budget")
      return
    }
    #expect(wait.scope == .daemon)
    h.network.set(.unmetered)
    await h.waitFor(job) { $0.isWorkCompleted }
    #expect(worker.invocations == 1)
  }
}
