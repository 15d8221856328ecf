import Foundation
import Testing

@testable import Backgrounder

@Suite struct StateMachineTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let job = id("test.machine.job")

  private func machine(registered: Set<TaskId>? = nil) -> DispatchStateMachine {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 2, minimumPeriodicInterval: .seconds(60)),
      registered: registered ?? [job], network: .unmetered, power: .externalPower, seed: 7)
  }

  private func row(_ request: WorkRequest, at time: WallInstant) -> TaskRow {
    TaskRow(request: request, input: Data(), now: time)
  }

  @Test("a run left running by a dead process becomes a counted retry")
  func interruptedRun() {
    var row = row(.oneTime(.init(taskId: job)), at: now)
    row.state = .running
    row.attempt = 2
    row.lastRunStartedAt = now
    var machine = machine()
    let later = now.advanced(by: .seconds(100))
    let effects = machine.load([row], now: later)
    let loaded = machine.entries[job]?.row
    #expect(loaded?.state == .backoff)
    #expect(loaded?.attempt == 3)
    #expect(loaded?.nextRun == later.advanced(by: .seconds(120)))
    #expect(loaded?.lastResult == .retry)
    #expect(effects.events.map(\.kind).contains(.attemptFailed(reason: .interrupted)))
    #expect(
      effects.ops.contains {
        if case .appendRun(let run) = $0 {
          run.outcome == "interrupted" && run.attempt == 2
        } else {
          false
        }
      })
  }

  @Test("an interrupted last attempt becomes a failure")
  func interruptedLastAttempt() {
    var row = row(.oneTime(.init(taskId: job, backoff: .linear(maxAttempts: 1))), at: now)
    row.state = .running
    row.lastRunStartedAt = now
    var machine = machine()
    let effects = machine.load([row], now: now)
    #expect(machine.entries[job] == nil)
    #expect(
      effects.ops.contains {
        if case .upsert(let row) = $0 { row.state == .failed } else { false }
      })
  }

  @Test("an overdue periodic resurrects as due now and runs once")
  func overduePeriodic() {
    var row = row(.periodic(.init(taskId: job, interval: .seconds(3600))), at: now)
    row.nextRun = now.advanced(by: .seconds(3600))
    var machine = machine()
    _ = machine.load([row], now: now.advanced(by: .seconds(13 * 3600)))
    let later = now.advanced(by: .seconds(13 * 3600))
    let (first, _) = machine.dispatch(now: later)
    #expect(first.tickets.count == 1)
    let (second, wake) = machine.dispatch(now: later)
    #expect(second.tickets.isEmpty)
    #expect(wake == nil)
    let token = first.tickets[0].token
    _ = machine.runEnded(token, ending: .finished(.success), abandoned: false, now: later)
    let (_, nextWake) = machine.dispatch(now: later)
    #expect(nextWake == later.advanced(by: .seconds(3600)))
  }

  @Test("a run's network bytes are an op of the step that records its outcome")
  func networkBytesGoWithTheOutcome() {
    var row = row(.periodic(.init(taskId: job, interval: .seconds(3600))), at: now)
    row.nextRun = now
    var machine = machine()
    _ = machine.load([row], now: now)
    let (first, _) = machine.dispatch(now: now)
    let token = first.tickets[0].token
    let record = RunNetworkRecord(
      taskId: job, attempt: 0, startedAt: now, at: now.advanced(by: .seconds(1)),
      bytes: RunNetworkBytes(
        sent: 10, received: 20, meteredSent: 0, meteredReceived: 0, accounting: .link))
    var detail = RunDetail()
    detail.networkBytes = record
    let effects = machine.runEnded(
      token, ending: .finished(.success), abandoned: false, now: now.advanced(by: .seconds(1)),
      detail: detail)
    let appended = effects.ops.firstIndex {
      if case .appendRun = $0 { true } else { false }
    }
    let bytes = effects.ops.firstIndex(of: .recordNetworkBytes(record))
    #expect(appended != nil && bytes != nil, "\(effects.ops)")
    // Without a count, no op.
    let (second, _) = machine.dispatch(now: now.advanced(by: .seconds(7200)))
    let plain = machine.runEnded(
      second.tickets[0].token, ending: .finished(.success), abandoned: false,
      now: now.advanced(by: .seconds(7201)))
    #expect(
      !plain.ops.contains {
        if case .recordNetworkBytes = $0 { true } else { false }
      })
  }

  @Test("the claim persists the advanced next run before any worker is invoked")
  func claimAdvancesNextRun() {
    var machine = machine()
    _ = machine.schedule(
      row(.periodic(.init(taskId: job, interval: .seconds(600))), at: now), policy: .replace,
      now: now)
    let (effects, _) = machine.dispatch(now: now)
    #expect(effects.tickets.count == 1)
    let persisted = effects.ops.compactMap { op -> TaskRow? in
      if case .upsert(let row) = op { row } else { nil }
    }
    #expect(persisted.last?.nextRun == now.advanced(by: .seconds(600)))
    #expect(persisted.last?.state == .running)
  }

  @Test("the concurrency limit holds and due work waits for a free slot")
  func concurrencyLimit() {
    let ids = (0..<5).map { id("test.machine.job\($0)") }
    var machine = machine(registered: Set(ids))
    for task in ids {
      _ = machine.schedule(row(.oneTime(.init(taskId: task)), at: now), policy: .replace, now: now)
    }
    let (effects, wake) = machine.dispatch(now: now)
    #expect(effects.tickets.count == 2)
    #expect(wake == nil)
    _ = machine.runEnded(
      effects.tickets[0].token, ending: .finished(.success), abandoned: false, now: now)
    #expect(machine.dispatch(now: now).0.tickets.count == 1)
  }
}

@Suite struct LatchTests {
  @Test("of many concurrent resolutions exactly one wins")
  func oneWinner() async {
    for _ in 0..<20 {
      let latch = Latch<Int>()
      let wins = await withTaskGroup(of: Bool.self) { group in
        for value in 0..<100 { group.addTask { latch.resolve(value) } }
        var wins = 0
        for await won in group where won { wins += 1 }
        return wins
      }
      #expect(wins == 1)
      let value = await latch.wait()
      #expect(latch.value == value)
    }
  }
}

@Suite struct QueueTests {
  private let now = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
  private let job = id("test.queue.job")
  private let other = id("test.queue.other")

  private func machine() -> DispatchStateMachine {
    DispatchStateMachine(
      settings: DispatchSettings(concurrencyLimit: 4, minimumPeriodicInterval: .seconds(60)),
      registered: [job, other], network: .unmetered, power: .externalPower, seed: 7)
  }

  private func oneTime(_ id: TaskId, delay: Int) -> TaskRow {
    TaskRow(
      request: .oneTime(.init(taskId: id, initialDelay: .seconds(delay))), input: Data(), now: now)
  }

  @Test("a task cancelled and scheduled again does not run at its old time")
  func rescheduleAfterCancel() {
    var machine = machine()
    _ = machine.schedule(oneTime(job, delay: 10), policy: .replace, now: now)
    _ = machine.cancel(job, now: now)
    _ = machine.schedule(oneTime(job, delay: 100), policy: .replace, now: now)
    #expect(machine.dispatch(now: now.advanced(by: .seconds(10))).0.tickets.isEmpty)
    #expect(
      machine.dispatch(now: now.advanced(by: .seconds(10))).1 == now.advanced(by: .seconds(100)))
    #expect(machine.dispatch(now: now.advanced(by: .seconds(100))).0.tickets.count == 1)
  }

  @Test("a flex window lets a periodic join an earlier dispatch but never wakes the loop early")
  func flexWindow() {
    var machine = machine()
    let periodic = TaskRow(
      request: .periodic(.init(taskId: job, interval: .seconds(3600), flexWindow: .seconds(900))),
      input: Data(), now: now)
    _ = machine.schedule(periodic, policy: .replace, now: now)
    let first = machine.dispatch(now: now).0.tickets
    #expect(first.count == 1)
    _ = machine.runEnded(first[0].token, ending: .finished(.success), abandoned: false, now: now)
    // Alone, it wakes the loop at the end of its interval, not at the start of its window.
    #expect(machine.dispatch(now: now).1 == now.advanced(by: .seconds(3600)))
    // Another task due inside the window takes it along.
    _ = machine.schedule(oneTime(other, delay: 3000), policy: .replace, now: now)
    #expect(machine.dispatch(now: now).1 == now.advanced(by: .seconds(3000)))
    let batch = machine.dispatch(now: now.advanced(by: .seconds(3000))).0.tickets
    #expect(Set(batch.map(\.taskId)) == [job, other])
  }
}
