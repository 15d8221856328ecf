import Foundation
import Testing

@testable import Backgrounder

/// `relax-after` in the state machine: a due task that waited `after` since its due time for its
/// conditions runs under the relaxed ones, at exactly that time and not before; the keys that
/// are never relaxed hold; a success restarts the wait; the wait start survives a restart.
@Suite struct RelaxMachineTests {
  private let t0 = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let job = id("test.relax.job")
  private let threeDays = Duration.seconds(3 * 86_400)
  private let onBattery = PowerConditions(isCharging: false, isBatteryNotLow: true)

  private func machine(network: NetworkConditions = .unmetered, power: PowerConditions)
    -> DispatchStateMachine
  {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: [job], network: network, power: power, seed: 7)
  }

  private func constraints(_ base: WorkConstraints) -> WorkConstraints {
    var constraints = base
    constraints.relaxation = .defaults(after: threeDays, for: base)
    return constraints
  }

  private func schedule(_ request: WorkRequest, _ machine: inout DispatchStateMachine) {
    _ = machine.schedule(
      TaskRow(request: request, input: Data(), now: t0), policy: .replace, now: t0)
  }

  private func history(_ effects: Effects) -> [RunRow] {
    effects.ops.compactMap { if case .appendRun(let run) = $0 { run } else { nil } }
  }

  @Test("charging relaxes to battery-not-low at exactly the deadline, not a nanosecond before")
  func relaxesAtTheDeadline() throws {
    var machine = machine(power: onBattery)
    schedule(
      .oneTime(.init(taskId: job, constraints: constraints(.init(requiresCharging: true)))),
      &machine)
    let (first, wake) = machine.dispatch(now: t0)
    #expect(first.tickets.isEmpty, "blocked on charging")
    #expect(wake == t0.advanced(by: threeDays), "the loop wakes when the constraints relax")
    #expect(machine.relaxesAt(job) == t0.advanced(by: threeDays))
    let before = machine.dispatch(now: t0.advanced(by: threeDays - .nanoseconds(1))).0
    #expect(before.tickets.isEmpty, "not relaxed before the deadline")
    let deadline = t0.advanced(by: threeDays)
    let (relaxed, _) = machine.dispatch(now: deadline)
    let ticket = try #require(relaxed.tickets.first)
    #expect(ticket.relaxed)
    let ended = machine.runEnded(
      ticket.token, ending: .finished(.success), abandoned: false,
      now: deadline.advanced(by: .seconds(60)))
    #expect(history(ended).map(\.reason) == ["ran relaxed after waiting 3 d for charging"])
  }

  @Test("an unmetered network relaxes to not-roaming: a metered link serves the relaxed run")
  func networkRelaxes() throws {
    var machine = machine(network: .metered, power: .externalPower)
    schedule(
      .oneTime(.init(taskId: job, constraints: constraints(.init(networkRequired: .unmetered)))),
      &machine)
    let gated = try #require(machine.dispatch(now: t0).0.tickets.first)
    #expect(gated.gate != nil && !gated.relaxed, "waits at the gate for an unmetered network")
    let gateEnd = t0.advanced(by: .seconds(5))
    _ = machine.gateResolved(gated.token, passed: false, now: gateEnd)
    let waited = threeDays + .seconds(2 * 3600)
    // Deferred over and over (backoff, then the gate again) until the deadline.
    let beforeDeadline = t0.advanced(by: threeDays - .seconds(1))
    for ticket in machine.dispatch(now: beforeDeadline).0.tickets {
      #expect(ticket.gate != nil && !ticket.relaxed)
      _ = machine.gateResolved(ticket.token, passed: false, now: beforeDeadline)
    }
    let later = t0.advanced(by: waited)
    let ticket = try #require(machine.dispatch(now: later).0.tickets.first)
    #expect(ticket.relaxed)
    #expect(ticket.gate == nil, "not-roaming is met by the metered link")
    let ended = machine.runEnded(
      ticket.token, ending: .finished(.success), abandoned: false, now: later)
    #expect(
      history(ended).map(\.reason) == [
        "ran relaxed after waiting 3 d 2 h for an unmetered network"
      ])
  }

  @Test("window, mount and destination are never relaxed")
  func neverRelaxedKeysHold() {
    let window = try! TimeWindow("01:00-02:00")
    let base = WorkConstraints(
      networkRequired: .unmetered, requiresCharging: true, windows: [window],
      allowedNetworks: NetworkAllowList(ssids: ["home"], interfaces: ["eth*"]),
      requiredMount: "/media/backup", requiredReachable: "nas.lan:445")
    let relaxed = constraints(base).relaxed
    #expect(relaxed.windows == [window])
    #expect(relaxed.requiredMount == "/media/backup")
    #expect(relaxed.requiredReachable == "nas.lan:445")
    #expect(relaxed.networkRequired == .notRoaming)
    #expect(!relaxed.requiresCharging && relaxed.requiresBatteryNotLow)
    #expect(relaxed.allowedNetworks == .any)

    var machine = DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: [job], network: .unmetered, power: onBattery, seed: 7,
      mounts: MountConditions(mountPoints: []))
    var mountOnly = WorkConstraints(requiresCharging: true, requiredMount: "/media/backup")
    mountOnly.relaxation = .defaults(after: threeDays, for: mountOnly)
    schedule(.oneTime(.init(taskId: job, constraints: mountOnly)), &machine)
    _ = machine.dispatch(now: t0)
    let (effects, _) = machine.dispatch(now: t0.advanced(by: threeDays + .seconds(1)))
    #expect(effects.tickets.isEmpty, "the disk is still not mounted")
    let task = machine.snapshot(now: t0.advanced(by: threeDays + .seconds(1))).first
    #expect(task?.pendingPredicates == [.mounted(path: "/media/backup")], "charging no longer")
  }

  @Test("a success restarts the wait: the next cycle waits the whole time again")
  func successRestartsTheWait() throws {
    var machine = machine(power: onBattery)
    let day = Duration.seconds(86_400)
    schedule(
      .periodic(
        .init(taskId: job, constraints: constraints(.init(requiresCharging: true)), interval: day)),
      &machine)
    _ = machine.dispatch(now: t0)
    let deadline = t0.advanced(by: threeDays)
    let ticket = try #require(machine.dispatch(now: deadline).0.tickets.first)
    #expect(ticket.relaxed)
    _ = machine.runEnded(ticket.token, ending: .finished(.success), abandoned: false, now: deadline)
    let nextDue = deadline.advanced(by: day)
    let (blocked, wake) = machine.dispatch(now: nextDue)
    #expect(blocked.tickets.isEmpty, "full constraints again after the success")
    #expect(wake == nextDue.advanced(by: threeDays))
    #expect(machine.dispatch(now: nextDue.advanced(by: threeDays - .seconds(1))).0.tickets.isEmpty)
    let again = try #require(machine.dispatch(now: nextDue.advanced(by: threeDays)).0.tickets.first)
    #expect(again.relaxed)
  }

  @Test("the wait start is stored: a restart does not restart the wait")
  func waitSurvivesARestart() throws {
    var machine = machine(power: onBattery)
    schedule(
      .oneTime(.init(taskId: job, constraints: constraints(.init(requiresCharging: true)))),
      &machine)
    let (effects, _) = machine.dispatch(now: t0.advanced(by: .seconds(30)))
    let stored = try #require(
      effects.ops.compactMap { if case .upsert(let row) = $0 { row } else { nil } }.last)
    #expect(stored.waitingSince == t0, "the wait starts at the due time")

    var restarted = self.machine(power: onBattery)
    _ = restarted.load([stored], now: t0.advanced(by: threeDays / 2))
    let (early, wake) = restarted.dispatch(now: t0.advanced(by: threeDays / 2))
    #expect(early.tickets.isEmpty)
    #expect(wake == t0.advanced(by: threeDays))
    let ticket = try #require(restarted.dispatch(now: t0.advanced(by: threeDays)).0.tickets.first)
    #expect(ticket.relaxed)
  }
}
