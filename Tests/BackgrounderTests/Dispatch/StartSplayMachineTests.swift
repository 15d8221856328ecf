import Foundation
import Testing

@testable import Backgrounder

/// `start-splay` in the state machine: the runs that became due while the runtime was off or
/// the system slept start spread over the splay, each at its own offset fixed by the machine id
/// and the task id, none before it, within the concurrency limit; zero turns it off.
@Suite struct StartSplayMachineTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let hour = Duration.seconds(3600)
  private let splay = StartSplay(over: .seconds(120), machineId: "0123456789abcdef0123456789abcdef")
  private let ids = (0..<8).map { id("test.splay.job\($0)") }

  private func machine(limit: Int = 8) -> DispatchStateMachine {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: limit, minimumPeriodicInterval: .seconds(60)),
      registered: Set(ids), network: .unmetered, power: .externalPower, seed: 7)
  }

  /// Hourly tasks stored when the last runtime stopped (at t0 + 1 s), each due at t0 + 1 h.
  private func storedRows() -> [TaskRow] {
    ids.map { id in
      var row = TaskRow(
        request: .periodic(.init(taskId: id, interval: hour)), input: Data(), now: t0)
      row.nextRun = t0.advanced(by: hour)
      row.updatedAt = t0.advanced(by: .seconds(1))
      return row
    }
  }

  private func offsets(_ splay: StartSplay) -> [TaskId: Duration] {
    Dictionary(
      uniqueKeysWithValues: ids.map {
        ($0, RandomDelay.fixed(machineId: splay.machineId, jobId: $0.rawValue, maximum: splay.over))
      })
  }

  @Test("catch-up runs after a start spread over the splay: distinct offsets, none early")
  func spreadAfterStart() {
    var machine = machine()
    let start = t0.advanced(by: hour * 2)
    let rows = storedRows()
    _ = machine.load(rows, now: start)
    let due = DispatchStateMachine.dueWhileOff(rows, now: start)
    #expect(Set(due) == Set(ids))
    machine.spreadCatchUp(splay, ids: due, now: start)
    let offsets = offsets(splay)
    #expect(Set(offsets.values).count == ids.count, "distinct offsets")
    #expect(offsets.values.allSatisfy { $0 >= .zero && $0 <= splay.over })
    for id in ids { #expect(machine.splayedUntil(id) == start.advanced(by: offsets[id]!)) }
    var started: [TaskId: WallInstant] = [:]
    for (id, offset) in offsets.sorted(by: { $0.value < $1.value }) {
      let at = start.advanced(by: offset)
      let early = machine.dispatch(now: at.advanced(by: .zero - .nanoseconds(1)))
      #expect(!early.0.tickets.contains { $0.taskId == id }, "\(id) not before its offset")
      for ticket in early.0.tickets { started[ticket.taskId] = at }
      let (effects, _) = machine.dispatch(now: at)
      #expect(effects.tickets.map(\.taskId) == [id])
      for ticket in effects.tickets { started[ticket.taskId] = at }
    }
    #expect(started.count == ids.count)
  }

  @Test("the offsets are fixed by machine id and task id")
  func deterministic() {
    let other = StartSplay(over: splay.over, machineId: "fedcba9876543210fedcba9876543210")
    #expect(offsets(splay) == offsets(splay))
    #expect(offsets(splay) != offsets(other), "another machine spreads otherwise")
    var first = machine()
    var second = machine()
    let start = t0.advanced(by: hour * 2)
    _ = first.load(storedRows(), now: start)
    _ = second.load(storedRows(), now: start)
    first.spreadCatchUp(splay, ids: ids, now: start)
    second.spreadCatchUp(splay, ids: ids, now: start)
    #expect(ids.map { first.splayedUntil($0) } == ids.map { second.splayedUntil($0) })
  }

  @Test("still within the concurrency limit")
  func concurrencyLimitHolds() {
    var machine = machine(limit: 2)
    let start = t0.advanced(by: hour * 2)
    _ = machine.load(storedRows(), now: start)
    machine.spreadCatchUp(splay, ids: ids, now: start)
    let (effects, _) = machine.dispatch(now: start.advanced(by: splay.over))
    #expect(effects.tickets.count == 2)
  }

  @Test("a splay of zero starts every catch-up run at once")
  func zeroDisables() {
    var machine = machine()
    let start = t0.advanced(by: hour * 2)
    _ = machine.load(storedRows(), now: start)
    machine.spreadCatchUp(
      StartSplay(over: .zero, machineId: splay.machineId), ids: ids, now: start)
    #expect(machine.dispatch(now: start).0.tickets.count == ids.count)
  }

  @Test("a run stopped by the shutdown, or due before it, is not held at the start")
  func dueBeforeTheStopIsNotHeld() {
    var rows = storedRows()
    rows[0].nextRun = t0  // due and waiting before the stop
    let due = DispatchStateMachine.dueWhileOff(rows, now: t0.advanced(by: hour * 2))
    #expect(!due.contains(ids[0]))
    #expect(due.count == ids.count - 1)
  }

  @Test("after a resume, what became due during the sleep spreads; a run stopped for it does not")
  func spreadAfterResume() throws {
    var machine = machine()
    _ = machine.load(storedRows(), now: t0.advanced(by: .seconds(10)))
    // All run at t0 + 1 h; all but the first end at once (next due at t0 + 2 h, during the
    // sleep); the first still runs when the system goes to sleep and is stopped for it.
    let tickets = machine.dispatch(now: t0.advanced(by: hour)).0.tickets
    #expect(tickets.count == ids.count)
    let running = try #require(tickets.first)
    for ticket in tickets.dropFirst() {
      _ = machine.runEnded(
        ticket.token, ending: .finished(.success), abandoned: false,
        now: t0.advanced(by: hour))
    }
    let sleep = t0.advanced(by: hour + .seconds(30))
    machine.dispatchHeld = true
    machine.sleptAt = sleep
    _ = machine.runEnded(
      running.token, ending: .stopped(.systemSuspending), abandoned: false, now: sleep)
    let resume = t0.advanced(by: hour * 3)
    machine.dispatchHeld = false
    let due = machine.dueWhileAsleep(now: resume)
    #expect(Set(due) == Set(tickets.dropFirst().map(\.taskId)))
    machine.spreadCatchUp(splay, ids: due, now: resume)
    let offsets = offsets(splay)
    let (effects, _) = machine.dispatch(now: resume)
    #expect(
      effects.tickets.map(\.taskId) == [running.taskId] + due.filter { offsets[$0] == .zero },
      "the stopped run resumes at once, the others wait for their offsets")
    for id in due { #expect(machine.splayedUntil(id) == resume.advanced(by: offsets[id]!)) }
  }
}
