import Foundation
import Testing

@testable import Backgrounder

/// `requires-idle` in the state machine, with the time given to each step: a due task waits
/// until the user has been idle long enough (a timer, no polling), unknown is not permission,
/// and a run going when the user comes back continues, pauses or stops (`on-user-return`).
@Suite struct UserIdleMachineTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let job = id("test.idle.job")

  private func machine() -> DispatchStateMachine {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: [job], network: .unmetered, power: .externalPower, seed: 7)
  }

  private func schedule(
    _ machine: inout DispatchStateMachine, idle: Duration = .seconds(600),
    onReturn: UserReturnPolicy = .continue
  ) {
    var constraints = WorkConstraints(requiresIdle: idle, onUserReturn: onReturn)
    constraints.onConditionLost = .stop
    let request = WorkRequest.oneTime(
      .init(taskId: job, constraints: constraints, budget: .seconds(3600)))
    _ = machine.schedule(
      TaskRow(request: request, input: Data(), now: now), policy: .replace, now: now)
  }

  private func idle(since seconds: Int64) -> UserIdleConditions {
    UserIdleConditions(idleSince: now.advanced(by: .seconds(seconds)).date)
  }

  private func at(_ seconds: Int64) -> WallInstant { now.advanced(by: .seconds(seconds)) }

  @Test("idle long enough: the due task runs at once")
  func idleLongEnoughRuns() {
    var machine = machine()
    _ = machine.userIdleChanged(idle(since: -700), now: now)
    schedule(&machine)
    let (effects, _) = machine.dispatch(now: now)
    #expect(effects.tickets.count == 1)
  }

  @Test("idle, not long enough: it waits, says how long so far, and the timer runs it on time")
  func waitsForTheIdleTime() throws {
    var machine = machine()
    _ = machine.userIdleChanged(idle(since: -180), now: now)
    schedule(&machine)
    let (effects, wake) = machine.dispatch(now: now)
    #expect(effects.tickets.isEmpty)
    #expect(effects.events.map(\.kind).contains(.attemptDeferred(reason: .userIdleNotMet)))
    let predicate = PendingPredicate.userIdle(
      required: .seconds(600), idleSince: at(-180).date, unknown: nil)
    #expect(machine.entries[job]?.row.blockedOn == [predicate])
    let task = try #require(machine.snapshot(now: now).first)
    #expect(task.state == .blocked)
    #expect(task.pendingPredicates == [predicate])
    #expect(
      PendingPredicate.userIdlePhrase(
        required: .seconds(600), idleSince: at(-180).date, unknown: nil, now: now.date)
        == "the user idle for 10 min (idle 3 min so far)")
    // Woken when the user has been idle 10 min: 7 min from now, not before.
    #expect(wake == at(420))
    #expect(machine.dispatch(now: at(419)).0.tickets.isEmpty)
    #expect(machine.dispatch(now: at(420)).0.tickets.count == 1)
  }

  @Test("the user active, or the idle state unknown: it waits, and no timer is set for it")
  func activeOrUnknownWaits() {
    for conditions in [UserIdleConditions.active, .unconfigured] {
      var machine = machine()
      _ = machine.userIdleChanged(conditions, now: now)
      schedule(&machine)
      let (effects, wake) = machine.dispatch(now: now)
      #expect(effects.tickets.isEmpty)
      #expect(wake == nil)
      #expect(
        machine.entries[job]?.row.blockedOn == [
          .userIdle(required: .seconds(600), idleSince: nil, unknown: conditions.unknown)
        ])
      #expect(machine.dispatch(now: at(3600)).0.tickets.isEmpty)
    }
  }

  @Test("the hint turning idle arms the timer; the user returning before it disarms it")
  func hintChangesRearm() {
    var machine = machine()
    _ = machine.userIdleChanged(.active, now: now)
    schedule(&machine)
    _ = machine.dispatch(now: now)
    _ = machine.userIdleChanged(idle(since: 10), now: at(10))
    let (early, wake) = machine.dispatch(now: at(10))
    #expect(early.tickets.isEmpty)
    #expect(wake == at(610))
    _ = machine.userIdleChanged(.active, now: at(300))
    let (back, noWake) = machine.dispatch(now: at(300))
    #expect(back.tickets.isEmpty)
    #expect(noWake == nil)
    _ = machine.userIdleChanged(idle(since: 400), now: at(400))
    #expect(machine.dispatch(now: at(999)).0.tickets.isEmpty)
    #expect(machine.dispatch(now: at(1000)).0.tickets.count == 1)
  }

  /// A machine running the task (started with the user idle long enough) and its run.
  private func running(_ policy: UserReturnPolicy) throws -> (DispatchStateMachine, RunToken) {
    var machine = machine()
    _ = machine.userIdleChanged(idle(since: -700), now: now)
    schedule(&machine, onReturn: policy)
    let ticket = try #require(machine.dispatch(now: now).0.tickets.first)
    return (machine, ticket.token)
  }

  @Test("the user returning mid-run: continue lets it run")
  func returnContinues() throws {
    var (machine, _) = try running(.continue)
    let effects = machine.userIdleChanged(.active, now: at(60))
    #expect(effects.stops.isEmpty && effects.pauses.isEmpty)
  }

  @Test("the user returning mid-run: stop stops it as a lost condition, and it waits again")
  func returnStops() throws {
    var (machine, token) = try running(.stop)
    let effects = machine.userIdleChanged(.active, now: at(60))
    #expect(effects.stops.map(\.0) == [token])
    #expect(effects.stops.map(\.1) == [.userReturned])
    let ended = machine.runEnded(
      token, ending: .stopped(.userReturned), abandoned: false, now: at(61))
    #expect(ended.tickets.isEmpty)
    #expect(machine.entries[job]?.row.attempt == 0)
    #expect(machine.dispatch(now: at(62)).0.tickets.isEmpty)
    #expect(
      machine.entries[job]?.row.blockedOn == [
        .userIdle(required: .seconds(600), idleSince: nil, unknown: nil)
      ])
  }

  @Test("the user returning mid-run: pause freezes it, thawed once idle long enough again")
  func returnPauses() throws {
    var (machine, token) = try running(.pause)
    let paused = machine.userIdleChanged(.active, now: at(60))
    #expect(paused.stops.isEmpty)
    #expect(paused.pauses.map(\.1) == [.userReturned])
    #expect(machine.pauseReason(token) == .userReturned)
    // Idle again, not long enough yet: still paused; the timer thaws it on time.
    let idleAgain = machine.userIdleChanged(idle(since: 100), now: at(100))
    #expect(idleAgain.resumes.isEmpty)
    let (early, wake) = machine.dispatch(now: at(100))
    #expect(early.resumes.isEmpty)
    #expect(wake == at(700))
    let (thawed, _) = machine.dispatch(now: at(700))
    #expect(thawed.resumes == [token])
    #expect(machine.pauseReason(token) == nil)
  }

  @Test("an idle state that becomes unknown mid-run stops nothing, whatever the policy")
  func unknownStopsNothing() throws {
    var (machine, _) = try running(.stop)
    let effects = machine.userIdleChanged(.unconfigured, now: at(60))
    #expect(effects.stops.isEmpty && effects.pauses.isEmpty)
  }

  @Test(
    "a task continuing on the user's return is thawed after a metered pause while the user is active"
  )
  func continuePolicyIgnoresTheUserForThaw() throws {
    var machine = machine()
    _ = machine.userIdleChanged(idle(since: -700), now: now)
    var constraints = WorkConstraints(
      networkRequired: .unmetered, requiresIdle: .seconds(600), onUserReturn: .continue)
    constraints.onConditionLost = .pause
    _ = machine.schedule(
      TaskRow(
        request: .oneTime(.init(taskId: job, constraints: constraints)), input: Data(), now: now),
      policy: .replace, now: now)
    let token = try #require(machine.dispatch(now: now).0.tickets.first).token
    #expect(machine.networkChanged(.metered, now: at(10)).pauses.map(\.0) == [token])
    _ = machine.userIdleChanged(.active, now: at(20))
    #expect(machine.networkChanged(.unmetered, now: at(30)).resumes == [token])
  }

  @Test("the relaxed constraints drop requires-idle")
  func relaxDropsIdle() {
    let constraints = WorkConstraints(
      relaxation: ConstraintRelaxation(
        after: .seconds(3600), networkRequired: .none, requiresCharging: false,
        requiresBatteryNotLow: false),
      requiresIdle: .seconds(600))
    #expect(constraints.relaxed.requiresIdle == nil)
  }
}
