import BackgrounderTesting
import Foundation
import GRDB
import Locking
import Testing

@testable import Backgrounder

/// Claims made ahead of free workers, in a running runtime: they share commits, never raise the
/// number of workers running at once, and every job is completed exactly once whatever races.
@Suite(.stopsRuntimes, .timeLimit(.minutes(2)))
struct ClaimAheadTests {
  /// Counts the workers running at once and the invocations of each task.
  final class Tally: Sendable {
    private struct State {
      var running = 0
      var mostRunning = 0
      var invocations: [TaskId: Int] = [:]
    }
    private let state = Lock(State())

    func worker(pause: Duration = .zero) -> ClosureWorker {
      ClosureWorker { context in
        self.state.withLock { state in
          state.running += 1
          state.mostRunning = max(state.mostRunning, state.running)
          state.invocations[context.taskId, default: 0] += 1
        }
        if pause > .zero { try? await Task.sleep(for: pause) }
        self.state.withLock { $0.running -= 1 }
        return .success
      }
    }

    var mostRunning: Int { state.withLock { $0.mostRunning } }
    func invocations(_ id: TaskId) -> Int { state.withLock { $0.invocations[id] ?? 0 } }
  }

  @Test(
    "with the one worker busy, jobs are claimed ahead up to the depth; 300 jobs each run and are recorded exactly once"
  )
  func exactlyOnceUnderBatching() async throws {
    let blocker = id("test.ahead.batch.blocker")
    let jobs = (0..<300).map { id("test.ahead.batch.n\($0)") }
    let tally = Tally()
    let gate = BlockingWorker()
    let worker = tally.worker()
    var workers = Dictionary(uniqueKeysWithValues: jobs.map { ($0, worker as any Worker) })
    workers[blocker] = gate
    let h = try await Harness.start(workers: workers, concurrencyLimit: 1)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: blocker))
    await gate.waitUntilInvoked()
    await withTaskGroup(of: ScheduleOutcome.self) { group in
      for job in jobs {
        group.addTask { await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) }
      }
      for await outcome in group { #expect(outcome == .scheduled) }
    }
    // Claimed ahead of the busy worker, on disk, as deep as the setting allows and no deeper:
    // these claims share commits (how many jobs an fsync carries is measured in BENCHMARKS.md,
    // "Fsyncs per job"; it depends on timing, so no test asserts it).
    let depth = DispatchSettings.claimAhead(concurrencyLimit: 1)
    var claimed = 0
    while claimed < depth + 1 {
      try await Task.sleep(for: .milliseconds(5))
      claimed = try TaskStoreReader(path: h.storePath).tasks().filter { $0.state == .running }.count
    }
    #expect(claimed == depth + 1, "the blocker and \(depth) claims ahead")
    gate.release()
    await h.recorder.wait(count: jobs.count + 1) { $0.kind.isWorkCompleted }
    await h.driver.flush()
    #expect(tally.mostRunning == 1)
    #expect(jobs.allSatisfy { tally.invocations($0) == 1 })
    let started = Dictionary(
      grouping: h.recorder.events { $0.kind.isWorkStarted && $0.taskId != blocker }, by: \.taskId)
    #expect(started.count == jobs.count && started.values.allSatisfy { $0.count == 1 })

    let queue = try DatabaseQueue(path: h.storePath)
    defer { try? queue.close() }
    let (succeeded, runs) = try queue.read { db in
      (
        try Int.fetchOne(db, sql: "SELECT count(*) FROM task WHERE state = 'succeeded'"),
        try Row.fetchAll(db, sql: "SELECT taskId, attempt, outcome FROM run")
      )
    }
    #expect(succeeded == jobs.count + 1)
    let perTask = Dictionary(grouping: runs, by: { $0["taskId"] as String })
    #expect(perTask.count == jobs.count + 1)
    #expect(
      perTask.values.allSatisfy {
        $0.count == 1 && $0[0]["outcome"] as String == "success" && $0[0]["attempt"] as Int == 0
      })
  }

  @Test(
    "promotions racing cancels, replacements, runNow and triggers: one worker at a time, one completion per job",
    arguments: 0..<5)
  func racingClaims(iteration: Int) async throws {
    let blocker = id("test.ahead.race.blocker")
    let jobs = (0..<30).map { id("test.ahead.race.n\($0)") }
    let tally = Tally()
    let gate = BlockingWorker()
    let worker = tally.worker(pause: .microseconds(200))
    var workers = Dictionary(uniqueKeysWithValues: jobs.map { ($0, worker as any Worker) })
    workers[blocker] = gate
    let h = try await Harness.start(workers: workers, concurrencyLimit: 1)
    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: blocker))
    await gate.waitUntilInvoked()
    for job in jobs { _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) }
    // Every job is claimed ahead of the one busy worker, on disk.
    while try TaskStoreReader(path: h.storePath).tasks().filter({ $0.state == .running }).count
      < jobs.count + 1
    {
      try await Task.sleep(for: .milliseconds(5))
    }

    let cancelled = Array(jobs[0..<10])
    let replaced = Array(jobs[10..<20])
    let triggered = Array(jobs[20..<30])
    let backgrounder = h.backgrounder
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<40 {
        group.addTask {
          switch (index + iteration) % 4 {
          case 0 where index / 4 < 10: _ = await backgrounder.cancel(cancelled[index / 4])
          case 1 where index / 4 < 10:
            _ = await backgrounder.schedule(WorkRequest.OneTime(taskId: replaced[index / 4]))
          case 2 where index / 4 < 10: _ = backgrounder.runNow(triggered[index / 4])
          default: backgrounder.dispatchNow()
          }
          if index == 17 + iteration { gate.release() }
        }
      }
    }
    gate.release()
    // Everything not cancelled finishes: one-time tasks leave the active set when done.
    while !h.backgrounder.scheduled().isEmpty { try await Task.sleep(for: .milliseconds(5)) }
    await h.driver.flush()
    #expect(tally.mostRunning == 1)
    #expect(cancelled.allSatisfy { tally.invocations($0) <= 1 })
    #expect(triggered.allSatisfy { tally.invocations($0) == 1 })
    // A replaced task may have run before its replacement; the replacement runs once.
    #expect(replaced.allSatisfy { (1...2).contains(tally.invocations($0)) })
    let reader = try TaskStoreReader(path: h.storePath)
    for job in triggered + replaced {
      let status = try #require(try reader.task(job))
      let successes = status.recentRuns.filter { $0.outcome == "success" }.count
      #expect(status.state == .succeeded, "\(job)")
      // A replaced run stopped mid-way records no success.
      #expect(
        triggered.contains(job) ? successes == 1 : (1...tally.invocations(job)).contains(successes),
        "\(job)")
    }
    for job in cancelled {
      // Gone, unless it had already finished when the cancel came.
      let status = try reader.task(job)
      #expect(status == nil || (status?.state == .succeeded && tally.invocations(job) == 1))
    }
    // The recorder takes events from the runtime's stream on a task of its own: wait until it
    // has one completion per triggered job (under load it lagged behind the store's flush),
    // then check that none has two.
    let triggeredSet = Set(triggered)
    _ = await h.recorder.wait(count: triggered.count) { event in
      event.kind.isWorkCompleted && event.taskId.map(triggeredSet.contains) == true
    }
    let completed = Dictionary(
      grouping: h.recorder.events { $0.kind.isWorkCompleted }.compactMap(\.taskId), by: { $0 })
    #expect(triggered.allSatisfy { completed[$0]?.count == 1 })
  }
}
