import Foundation
import Testing

@testable import Backgrounder

/// The state machine's claims ahead of free workers: what is claimed, what the store is told,
/// how a claim becomes a run, and how a claim left behind by a dead process comes back.
@Suite struct ClaimAheadMachineTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let jobs = (0..<6).map { id("test.ahead.machine.n\($0)") }
  // Sorted before the jobs: they are at the head of the queue when the slots are full.
  private let periodic = id("test.ahead.machine.aperiodic")
  private let online = id("test.ahead.machine.bonline")

  private func machine(network: NetworkConditions = .unmetered) -> DispatchStateMachine {
    var settings = DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60))
    settings.claimAhead = 3
    return DispatchStateMachine(
      settings: settings, registered: Set(jobs + [periodic, online]), network: network,
      power: .externalPower, seed: 7)
  }

  private func schedule(_ request: WorkRequest, in machine: inout DispatchStateMachine) {
    let row = TaskRow(request: request, input: Data(), now: now)
    _ = machine.schedule(row, policy: .replace, now: now)
  }

  private func upserts(_ effects: Effects) -> [TaskRow] {
    effects.ops.compactMap { op in if case .upsert(let row) = op { row } else { nil } }
  }

  @Test(
    "due one-time tasks beyond the free slots are claimed in the same step, as running rows with no start time"
  )
  func claimsBeyondTheSlots() {
    var machine = machine()
    for job in jobs { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    let (effects, _) = machine.dispatch(now: now)
    #expect(effects.tickets.count == 5)
    #expect(effects.tickets.filter(\.claimedAhead).count == 3)
    let written = upserts(effects)
    #expect(written.count == 5 && written.allSatisfy { $0.state == .running })
    // Invoked at once: the start is part of the claim; claimed ahead: no start time yet.
    #expect(written.filter { $0.lastRunStartedAt == now }.count == 2)
    #expect(written.filter { $0.lastRunStartedAt == nil }.count == 3)
    #expect(effects.events.filter(\.kind.isWorkStarted).count == 2)
    #expect(machine.runsInSlots == 2)
    // The sixth waits in its queue: the claim-ahead depth is 3.
    #expect(machine.dispatch(now: now).0.tickets.isEmpty)
  }

  @Test(
    "a run's end hands its slot to the oldest claim, whose start is marked without a claim of its own"
  )
  func endPromotesAClaim() throws {
    var machine = machine()
    for job in jobs.prefix(4) { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    let tickets = machine.dispatch(now: now).0.tickets
    let first = try #require(tickets.first { !$0.claimedAhead })
    let oldestClaim = try #require(tickets.first { $0.claimedAhead })
    let later = now.advanced(by: .seconds(1))
    let effects = machine.runEnded(
      first.token, ending: .finished(.success), abandoned: false, now: later)
    #expect(effects.promotions.map(\.token) == [oldestClaim.token])
    #expect(effects.tickets.isEmpty)
    let marks = effects.ops.compactMap { op in
      if case .markStarted(let row) = op { row } else { nil }
    }
    #expect(marks.map(\.id) == [oldestClaim.taskId])
    #expect(marks.first?.lastRunStartedAt == later && marks.first?.state == .running)
    #expect(
      effects.events.contains {
        $0.taskId == oldestClaim.taskId && $0.kind == .workStarted(attempt: 0)
      })
    #expect(machine.runsInSlots == 2)
  }

  @Test("periodic work and work waiting for its network are never claimed ahead")
  func onlyUngatedOneTimeWork() {
    var machine = machine(network: .offline)
    for job in jobs.prefix(2) { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    #expect(machine.dispatch(now: now).0.tickets.count == 2)
    schedule(.periodic(.init(taskId: periodic, interval: .seconds(3600))), in: &machine)
    #expect(machine.dispatch(now: now).0.tickets.isEmpty)
    _ = machine.cancel(periodic, now: now)
    schedule(
      .oneTime(.init(taskId: online, constraints: .init(networkRequired: .any))), in: &machine)
    #expect(machine.dispatch(now: now).0.tickets.isEmpty)
    _ = machine.cancel(online, now: now)
    // Ungated one-time work is claimed ahead in the same situation.
    schedule(.oneTime(.init(taskId: jobs[2])), in: &machine)
    #expect(machine.dispatch(now: now).0.tickets.map(\.taskId) == [jobs[2]])
  }

  @Test("cancelling or replacing a claimed task forgets the claim: nothing was invoked")
  func cancelDropsTheClaim() throws {
    var machine = machine()
    for job in jobs.prefix(4) { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    let tickets = machine.dispatch(now: now).0.tickets
    let claims = tickets.filter(\.claimedAhead)
    let (outcome, cancelled) = machine.cancel(claims[0].taskId, now: now)
    #expect(outcome == .cancelled(pendingCleared: true))
    #expect(machine.liveRuns[claims[0].token] == nil && cancelled.stops.isEmpty)
    let replacement = TaskRow(
      request: .oneTime(.init(taskId: claims[1].taskId)), input: Data(), now: now)
    let (scheduled, replaced) = machine.schedule(replacement, policy: .replace, now: now)
    #expect(scheduled == .scheduled)
    #expect(machine.liveRuns[claims[1].token] == nil && replaced.stops.isEmpty)
    #expect(machine.liveRuns.count == 2)
    // The replacement is claimed afresh, and no run of the cancelled task is promoted.
    let next = machine.dispatch(now: now).0.tickets
    #expect(next.map(\.taskId) == [claims[1].taskId])
    let running = try #require(tickets.first { !$0.claimedAhead })
    let ended = machine.runEnded(
      running.token, ending: .finished(.success), abandoned: false, now: now)
    #expect(ended.promotions.count == 1 && ended.promotions.map(\.token) != [claims[0].token])
  }

  @Test("shutdown gives every claim without a worker back as pending")
  func shutdownReleasesClaims() {
    var machine = machine()
    for job in jobs.prefix(4) { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    let claims = machine.dispatch(now: now).0.tickets.filter(\.claimedAhead)
    let effects = machine.beginShutdown(now: now)
    #expect(claims.count == 2 && claims.allSatisfy { machine.liveRuns[$0.token] == nil })
    #expect(effects.stops.count == 2)
    let released = upserts(effects)
    #expect(Set(released.map(\.id)) == Set(claims.map(\.taskId)))
    #expect(released.allSatisfy { $0.state == .pending && $0.attempt == 0 })
  }

  @Test(
    "a claim a dead process left without a start time is due again without using an attempt; a started one is counted"
  )
  func resurrection() {
    var claimed = TaskRow(
      request: .oneTime(.init(taskId: jobs[0])), input: Data(), now: now)
    claimed.state = .running
    claimed.attempt = 1
    var started = TaskRow(request: .oneTime(.init(taskId: jobs[1])), input: Data(), now: now)
    started.state = .running
    started.lastRunStartedAt = now
    var machine = machine()
    let later = now.advanced(by: .seconds(100))
    let effects = machine.load([claimed, started], now: later)
    let resumed = machine.entries[jobs[0]]?.row
    #expect(resumed?.state == .pending && resumed?.attempt == 1)
    #expect(!effects.events.contains { $0.taskId == jobs[0] && !$0.kind.isWorkStarted })
    #expect(upserts(effects).contains { $0.id == jobs[0] && $0.state == .pending })
    #expect(machine.entries[jobs[1]]?.row.attempt == 1)
    #expect(
      effects.events.contains {
        $0.taskId == jobs[1] && $0.kind == .attemptFailed(reason: .interrupted)
      })
    // Due at once.
    #expect(machine.dispatch(now: later).0.tickets.map(\.taskId).contains(jobs[0]))
  }

  @Test(
    "a claim made ahead once its window opened leaves the window's hold behind: a retry waits for its backoff, not for a window"
  )
  func claimEndsTheWindowHold() throws {
    var machine = machine()
    for job in jobs.prefix(2) { schedule(.oneTime(.init(taskId: job)), in: &machine) }
    let busy = machine.dispatch(now: now).0.tickets
    #expect(busy.count == 2 && machine.runsInSlots == 2)
    // 22:13:20 UTC: held until its window opens at 23:00.
    let windowed = jobs[5]
    let constraints = WorkConstraints(windows: [try TimeWindow("23:00-23:30")])
    schedule(.oneTime(.init(taskId: windowed, constraints: constraints)), in: &machine)
    #expect(machine.dispatch(now: now).0.tickets.isEmpty)
    let opens = now.advanced(by: .seconds(46 * 60 + 40))
    #expect(
      machine.snapshot(now: now).first { $0.taskId == windowed }?.pendingPredicates
        == [.waitingForWindow(opens: opens.date)])
    // The window opens while both slots are busy: claimed ahead, then promoted.
    let claim = try #require(machine.dispatch(now: opens).0.tickets.first)
    #expect(claim.taskId == windowed && claim.claimedAhead)
    let ended = machine.runEnded(
      busy[0].token, ending: .finished(.success), abandoned: false, now: opens)
    #expect(ended.promotions.map(\.token) == [claim.token])
    let later = opens.advanced(by: .seconds(60))
    _ = machine.runEnded(
      claim.token, ending: .finished(.retry(reason: "try later")), abandoned: false, now: later)
    let task = try #require(machine.snapshot(now: later).first { $0.taskId == windowed })
    let retryAt = try #require(task.nextRunHint)
    #expect(retryAt > later.date && task.state == .backoff)
    #expect(task.pendingPredicates == [.waitingForBackoff(until: retryAt)])
  }
}
