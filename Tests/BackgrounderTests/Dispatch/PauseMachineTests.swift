import Foundation
import Testing

@testable import Backgrounder

/// `on-condition-lost = "pause"` in the state machine: a run that loses a condition is frozen
/// (not stopped), thawed when the conditions hold again with no attempt used, stopped after
/// its pause-max, and its budget clock stands still while it is paused.
@Suite struct PauseMachineTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let job = id("test.pause.job")

  private func machine() -> DispatchStateMachine {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: [job], network: .unmetered, power: .externalPower, seed: 7)
  }

  /// A machine running one unmetered one-time run of `job` (`loss`: its policy), and the run.
  private func running(_ loss: ConditionLossPolicy, charging: Bool = false) -> (
    DispatchStateMachine, RunToken
  ) {
    var machine = machine()
    var constraints = WorkConstraints(networkRequired: .unmetered, requiresCharging: charging)
    constraints.onConditionLost = loss
    let request = WorkRequest.oneTime(
      .init(taskId: job, constraints: constraints, budget: .seconds(600)))
    _ = machine.schedule(
      TaskRow(request: request, input: Data(), now: now), policy: .replace, now: now)
    let (effects, _) = machine.dispatch(now: now)
    #expect(effects.tickets.count == 1)
    return (machine, effects.tickets[0].token)
  }

  private func outcomes(_ effects: Effects) -> [String] {
    effects.ops.compactMap { op in
      if case .appendRun(let run) = op { run.outcome } else { nil }
    }
  }

  @Test("a lost condition pauses the run of a pausing task: no stop, recorded with its reason")
  func pausesOnLoss() {
    var (machine, token) = running(.pause(max: .seconds(3600)))
    let later = now.advanced(by: .seconds(60))
    let effects = machine.networkChanged(.metered, now: later)
    #expect(effects.stops.isEmpty)
    #expect(effects.pauses.map(\.0) == [token])
    #expect(effects.pauses.map(\.1) == [.networkMetered])
    #expect(outcomes(effects) == ["paused"])
    #expect(machine.pauseReason(token) == .networkMetered)
    #expect(machine.entries[job]?.row.pausedAt == later)
    #expect(machine.entries[job]?.row.state == .running)
    #expect(effects.events.map(\.kind).contains(.workPaused(attempt: 0, reason: .networkMetered)))
  }

  @Test("a task that stops (the default) is stopped as before")
  func stopsByDefault() {
    var (machine, token) = running(.stop)
    let effects = machine.networkChanged(.metered, now: now)
    #expect(effects.stops.map(\.0) == [token])
    #expect(effects.pauses.isEmpty)
    #expect(machine.pauseReason(token) == nil)
  }

  @Test("regaining the condition thaws the same run, and it ends in its first attempt")
  func resumesOnRegain() {
    var (machine, token) = running(.pause(max: .seconds(3600)))
    _ = machine.networkChanged(.metered, now: now.advanced(by: .seconds(10)))
    // Still lost (offline now): it stays paused, nothing more to do.
    let offline = machine.networkChanged(.offline, now: now.advanced(by: .seconds(20)))
    #expect(offline.pauses.isEmpty && offline.resumes.isEmpty && offline.stops.isEmpty)
    let back = machine.networkChanged(.unmetered, now: now.advanced(by: .seconds(70)))
    #expect(back.resumes == [token])
    #expect(outcomes(back) == ["resumed"])
    #expect(machine.pauseReason(token) == nil)
    #expect(machine.entries[job]?.row.pausedAt == nil)
    let ended = machine.runEnded(
      token, ending: .finished(.success), abandoned: false, now: now.advanced(by: .seconds(90)))
    let finished = ended.ops.compactMap { op -> RunRow? in
      if case .appendRun(let run) = op { run } else { nil }
    }
    #expect(finished.map(\.outcome) == ["success"])
    #expect(finished.map(\.attempt) == [0])
  }

  @Test("a pause waits for every condition: power lost while paused for the network holds it")
  func resumesOnlyWhenAllHold() {
    var (machine, token) = running(.pause(max: .seconds(3600)), charging: true)
    _ = machine.networkChanged(.metered, now: now)
    _ = machine.powerChanged(PowerConditions(isCharging: false, isBatteryNotLow: true), now: now)
    let network = machine.networkChanged(.unmetered, now: now)
    #expect(network.resumes.isEmpty)
    #expect(machine.pauseReason(token) == .networkMetered)
    let power = machine.powerChanged(.externalPower, now: now)
    #expect(power.resumes == [token])
  }

  @Test("after pause-max paused the run is stopped for the condition it lost")
  func stopsAfterPauseMax() {
    var (machine, token) = running(.pause(max: .seconds(300)))
    let pausedAt = now.advanced(by: .seconds(30))
    _ = machine.networkChanged(.metered, now: pausedAt)
    let (early, wake) = machine.dispatch(now: pausedAt.advanced(by: .seconds(299)))
    #expect(early.stops.isEmpty)
    #expect(wake == pausedAt.advanced(by: .seconds(300)))
    let (expired, _) = machine.dispatch(now: pausedAt.advanced(by: .seconds(300)))
    #expect(expired.stops.map(\.0) == [token])
    #expect(expired.stops.map(\.1) == [.networkMetered])
    // Stopped once, and not thawed while it is being stopped.
    #expect(machine.dispatch(now: pausedAt.advanced(by: .seconds(400))).0.stops.isEmpty)
    #expect(machine.networkChanged(.unmetered, now: pausedAt).resumes.isEmpty)
    let ended = machine.runEnded(
      token, ending: .stopped(.networkMetered), abandoned: false,
      now: pausedAt.advanced(by: .seconds(301)))
    #expect(outcomes(ended) == ["stopped"])
    // A stop uses no attempt.
    #expect(machine.entries[job]?.row.attempt == 0)
  }

  @Test("the budget clock stands still while the run is paused")
  func budgetSkipsPausedTime() {
    var (machine, token) = running(.pause(max: .seconds(3600)))
    #expect(
      machine.budgetState(token, budget: .seconds(600), now: now)
        == .runsOut(now.advanced(by: .seconds(600))))
    _ = machine.networkChanged(.metered, now: now.advanced(by: .seconds(100)))
    #expect(
      machine.budgetState(token, budget: .seconds(600), now: now.advanced(by: .seconds(900)))
        == .paused)
    _ = machine.networkChanged(.unmetered, now: now.advanced(by: .seconds(1000)))
    // 900 s paused: the budget runs out 600 s of running after the start.
    let runsOut = now.advanced(by: .seconds(1500))
    #expect(
      machine.budgetState(token, budget: .seconds(600), now: now.advanced(by: .seconds(1000)))
        == .runsOut(runsOut))
    #expect(machine.budgetState(token, budget: .seconds(600), now: runsOut) == .expired)
  }

  @Test("a metered budget spent mid-run pauses a pausing run; bytes freed by the window thaw it")
  func aBudgetSpentMidRunPauses() throws {
    var machine = DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: [job], network: .metered, power: .externalPower, seed: 7)
    let budget = MeteredBudget(bytes: 200_000_000, window: .trailing(seconds: 86_400))
    func standings(used: Int64) -> MeteredBudgetStandings {
      MeteredBudgetStandings(tasks: [
        job: budget.standing(
          of: [MeteredUsageRecord(at: now.advanced(by: .seconds(-3600)), bytes: used)], at: now,
          zone: .utc)
      ])
    }
    _ = machine.meteredBudgetsChanged(standings(used: 10_000_000), now: now)
    var constraints = WorkConstraints(networkRequired: .unmetered, meteredBudget: budget)
    constraints.onConditionLost = .pause(max: .seconds(3600))
    let request = WorkRequest.oneTime(.init(taskId: job, constraints: constraints))
    _ = machine.schedule(
      TaskRow(request: request, input: Data(), now: now), policy: .replace, now: now)
    let (started, _) = machine.dispatch(now: now)
    let token = try #require(started.tickets.first?.token, "under budget a metered link does")

    let spent = machine.meteredBudgetsChanged(
      standings(used: 212_000_000), now: now.advanced(by: .seconds(30)))
    #expect(spent.stops.isEmpty)
    #expect(spent.pauses.map(\.0) == [token])
    #expect(spent.pauses.map(\.1) == [.networkMetered])
    #expect(outcomes(spent) == ["paused"])

    let freed = machine.meteredBudgetsChanged(
      standings(used: 150_000_000), now: now.advanced(by: .seconds(60)))
    #expect(freed.resumes == [token])
    #expect(outcomes(freed) == ["resumed"])
    #expect(machine.entries[job]?.row.attempt == 0)
  }

  /// A machine running one run of `job` in the window 22:00–23:00 UTC (`now` is 22:13:20),
  /// `window-end = "stop"`, pausing for at most `max`.
  private func runningInAWindow(max: Duration) throws -> (DispatchStateMachine, RunToken) {
    var machine = machine()
    var constraints = WorkConstraints(
      networkRequired: .unmetered, windows: [try TimeWindow("22:00-23:00")], windowEnd: .stop)
    constraints.onConditionLost = .pause(max: max)
    let request = WorkRequest.oneTime(.init(taskId: job, constraints: constraints))
    _ = machine.schedule(
      TaskRow(request: request, input: Data(), now: now), policy: .replace, now: now)
    let (effects, _) = machine.dispatch(now: now)
    return (machine, try #require(effects.tickets.first?.token))
  }

  private var closes: WallInstant { now.advanced(by: .seconds(2800)) }  // 23:00
  private var opensAgain: WallInstant { closes.advanced(by: .seconds(23 * 3600)) }  // 22:00

  @Test("a window that closes pauses a pausing run; the next opening thaws it, its end pauses it")
  func aWindowEndPausesTheRunUntilTheNextOpening() throws {
    var (machine, token) = try runningInAWindow(max: .seconds(2 * 86_400))
    let (closed, wake) = machine.dispatch(now: closes)
    #expect(closed.stops.isEmpty)
    #expect(closed.pauses.map(\.0) == [token])
    #expect(closed.pauses.map(\.1) == [.windowClosed])
    #expect(wake == opensAgain, "woken to thaw it when the window opens")
    // Conditions coming and going outside the window thaw nothing.
    _ = machine.networkChanged(.metered, now: closes.advanced(by: .seconds(60)))
    let back = machine.networkChanged(.unmetered, now: closes.advanced(by: .seconds(120)))
    #expect(back.resumes.isEmpty)

    let (opened, nextWake) = machine.dispatch(now: opensAgain)
    #expect(opened.resumes == [token])
    #expect(outcomes(opened) == ["resumed"])
    #expect(nextWake == opensAgain.advanced(by: .seconds(3600)), "its window's end, armed again")
    let (closedAgain, _) = machine.dispatch(now: opensAgain.advanced(by: .seconds(3600)))
    #expect(closedAgain.pauses.map(\.0) == [token])
    #expect(machine.entries[job]?.row.attempt == 0)
  }

  @Test("a window that closes during a pause for the network must open again before the thaw")
  func aWindowClosingDuringAPauseHoldsTheThaw() throws {
    var (machine, token) = try runningInAWindow(max: .seconds(2 * 86_400))
    let lost = machine.networkChanged(.metered, now: now.advanced(by: .seconds(60)))
    #expect(lost.pauses.map(\.1) == [.networkMetered])
    let (closed, _) = machine.dispatch(now: closes)
    #expect(closed.stops.isEmpty && closed.pauses.isEmpty)
    let back = machine.networkChanged(.unmetered, now: closes.advanced(by: .seconds(60)))
    #expect(back.resumes.isEmpty, "not thawed outside its window")
    let (opened, _) = machine.dispatch(now: opensAgain)
    #expect(opened.resumes == [token])
  }

  @Test("paused for its window longer than its pause-max, the run is stopped as a retry")
  func aWindowPauseRunsOutAtPauseMax() throws {
    var (machine, token) = try runningInAWindow(max: .seconds(3600))
    let (closed, wake) = machine.dispatch(now: closes)
    #expect(closed.pauses.map(\.0) == [token])
    #expect(wake == closes.advanced(by: .seconds(3600)), "its pause-max comes before the opening")
    let (expired, _) = machine.dispatch(now: closes.advanced(by: .seconds(3600)))
    #expect(expired.stops.map(\.0) == [token])
    #expect(expired.stops.map(\.1) == [.windowClosed])
  }
}
