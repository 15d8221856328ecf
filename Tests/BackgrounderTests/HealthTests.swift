import Backgrounder
import BackgrounderTesting
import Foundation
import GRDB
import Locking
import Testing

/// `diagnostics()` reports each detected problem, and `isHealthy` only when there is none.
@Suite(.stopsRuntimes, .timeLimit(.minutes(3)))
struct HealthTests {
  @Test("a runtime whose sources report and whose store writes is healthy")
  func healthy() async throws {
    let job = id("test.health.ok")
    let h = try await Harness.start(workers: [job: RecordingWorker()])

    #expect(await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job)) == .scheduled)
    await h.waitFor(job) { $0.isWorkCompleted }
    h.network.set(.metered)
    h.power.set(PowerConditions(isCharging: false, isBatteryNotLow: true))
    await waitForDiagnostics(h.backgrounder) { $0.network == .metered && !$0.power.isCharging }
    h.clock.advance(by: HealthProblem.silentSourceLimit * 2)
    let diagnostics = h.backgrounder.diagnostics()
    #expect(diagnostics.problems == [])
    #expect(diagnostics.isHealthy)
    #expect(h.backgrounder.isHealthy)
  }

  @Test("a condition source that never reports is a problem once 30 s have passed")
  func silentSource() async throws {
    let source = SilentNetwork()
    let h = try await Harness.start(workers: [:], network: .unmetered, networkSource: source)

    await source.waitUntilSubscribed()
    h.clock.advance(by: HealthProblem.silentSourceLimit - .nanoseconds(1))
    #expect(h.backgrounder.diagnostics().isHealthy)
    h.clock.advance(by: .nanoseconds(1))
    let problems = h.backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.conditionSourceSilent])
    #expect(problems.first?.message.contains("network source") == true)
    #expect(!h.backgrounder.isHealthy)
  }

  @Test("a condition source whose updates end is reported as failed")
  func endedSource() async throws {
    let h = try await Harness.start(workers: [:], networkSource: EndingNetwork())

    let diagnostics = await waitForDiagnostics(h.backgrounder) { !$0.problems.isEmpty }
    #expect(diagnostics.problems.map(\.kind) == [.conditionSourceFailed])
    #expect(diagnostics.problems.first?.detectedAt == h.clock.date)
    #expect(!diagnostics.isHealthy)
  }

  @Test("a worker abandoned after ignoring cancellation is a problem naming its task")
  func abandonedWorker() async throws {
    let job = id("test.health.abandon")
    let worker = BlockingWorker(ignoresCancellation: true)
    let h = try await Harness.start(workers: [job: worker], gracePeriod: .seconds(7))
    defer {
      worker.release()
      Task { await h.stop() }
    }

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(30)))
    await h.waitFor(job) { $0.isWorkStarted }
    await h.clock.waitForSleepers(until: h.at(30))
    h.clock.advance(by: .seconds(30))
    await h.clock.waitForSleepers(until: h.at(37))
    #expect(h.backgrounder.diagnostics().isHealthy)
    h.clock.advance(by: .seconds(7))
    await h.waitFor(job) { $0 == .workerAbandoned(attempt: 0) }
    let problems = h.backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.workerAbandoned])
    #expect(problems.first?.taskId == job)
    #expect(problems.first?.detectedAt == h.at(37))
  }

  @Test("a run still in flight after its budget and the grace period is reported as stuck")
  func stuckRun() async throws {
    let job = id("test.health.stuck")
    let worker = BlockingWorker(ignoresCancellation: true)
    let h = try await Harness.start(workers: [job: worker], gracePeriod: .seconds(7))
    defer {
      worker.release()
      Task { await h.stop() }
    }

    _ = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job, budget: .seconds(30)))
    await h.waitFor(job) { $0.isWorkStarted }
    await h.clock.waitForSleepers(until: h.at(30))
    h.clock.advance(by: .seconds(38))
    #expect(h.backgrounder.diagnostics().isHealthy)
    // The clock leaps past budget + grace + 1 s at once: the run is still in flight (its grace
    // timer starts only now), which is exactly what the check is for.
    h.clock.advance(by: .nanoseconds(1))
    let problems = h.backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.taskStuck])
    #expect(problems.first?.taskId == job)
  }

  @Test("a failed store write is a problem carrying the store's error")
  func storeError() async throws {
    let job = id("test.health.store")
    let h = try await Harness.start(workers: [job: RecordingWorker()])

    // Another connection makes every task write fail, as a full or failing disk would.
    let saboteur = try DatabaseQueue(path: h.storePath)
    try await saboteur.write { db in
      try db.execute(
        sql: """
          CREATE TRIGGER refuse BEFORE INSERT ON task
          BEGIN SELECT RAISE(ABORT, 'injected write failure'); END;
          """)
    }
    try saboteur.close()
    let outcome = await h.backgrounder.schedule(WorkRequest.OneTime(taskId: job))
    guard case .rejected(let reason) = outcome, reason.code == .storeFailure else {
      Issue.record("expected a store failure, got \(outcome)")
      return
    }
    let problems = h.backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.storeError])
    #expect(problems.first?.message.contains("injected write failure") == true)
  }

  @Test("a store that cannot be opened is a problem after start() fails")
  func startFailure() async throws {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("not-a-store.sqlite").path
    try Data("this is not SQLite".utf8).write(to: URL(fileURLWithPath: path))
    let backgrounder = Backgrounder(
      configuration: .init(
        storePath: path, network: AlwaysReachableNetwork(), power: AlwaysExternalPower()))
    await #expect(throws: StoreError.self) { try await backgrounder.start() }
    let problems = backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.storeError])
    #expect(problems.first?.message.contains(path) == true)
    try? FileManager.default.removeItem(at: directory)
  }

  @Test("a recorded clock jump is a problem with the offset")
  func clockJump() async throws {
    let h = try await Harness.start(workers: [:])

    h.backgrounder.recordClockJump(offset: .seconds(-3600))
    h.backgrounder.recordClockJump()
    let problems = h.backgrounder.diagnostics().problems
    #expect(problems.map(\.kind) == [.clockJump, .clockJump])
    #expect(problems[0].message.contains("by -3600.0 seconds"))
    #expect(problems[0].detectedAt == h.clock.date)
  }

  @Test("problems encode with stable kind names and ISO 8601 times, and decode back")
  func problemCoding() throws {
    let problem = HealthProblem(
      kind: .taskStuck, taskId: id("test.health.json"),
      detectedAt: Date(timeIntervalSince1970: 1_700_000_000.5), message: "stuck")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let json = String(decoding: try encoder.encode(problem), as: UTF8.self)
    #expect(
      json
        == #"{"detectedAt":"2023-11-14T22:13:20.500Z","kind":"taskStuck","message":"stuck","taskId":"test.health.json"}"#
    )
    #expect(try JSONDecoder().decode(HealthProblem.self, from: Data(json.utf8)) == problem)
    #expect(
      [
        HealthProblem.Kind.storeError, .conditionSourceFailed, .conditionSourceSilent,
        .workerAbandoned, .taskStuck, .clockJump,
      ].map(\.rawValue)
        == [
          "storeError", "conditionSourceFailed", "conditionSourceSilent", "workerAbandoned",
          "taskStuck", "clockJump",
        ])
  }
}

/// Waits (polling, bounded) until the runtime has applied what the test caused, i.e. until
/// its diagnostics satisfy `condition`; returns them.
@discardableResult
private func waitForDiagnostics(
  _ backgrounder: Backgrounder, _ condition: (Diagnostics) -> Bool
) async -> Diagnostics {
  for _ in 0..<10_000 {
    let diagnostics = backgrounder.diagnostics()
    if condition(diagnostics) { return diagnostics }
    try? await Task.sleep(for: .milliseconds(1))
  }
  let diagnostics = backgrounder.diagnostics()
  Issue.record("condition never held: \(diagnostics)")
  return diagnostics
}

/// A network source that is subscribed to but never delivers anything.
private final class SilentNetwork: NetworkConditionSource {
  private let subscribed = Lock<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>(
    (false, []))

  var current: NetworkConditions { .unmetered }

  func updates() -> AsyncStream<NetworkConditions> {
    let waiters = subscribed.withLock { state in
      state.done = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
    return AsyncStream { _ in }
  }

  func waitUntilSubscribed() async {
    await withCheckedContinuation { continuation in
      let done = subscribed.withLock { state in
        if !state.done { state.waiters.append(continuation) }
        return state.done
      }
      if done { continuation.resume() }
    }
  }
}

/// A network source whose updates end after the first value, as a failed monitor's would.
private struct EndingNetwork: NetworkConditionSource {
  var current: NetworkConditions { .unmetered }

  func updates() -> AsyncStream<NetworkConditions> {
    AsyncStream { continuation in
      continuation.yield(.unmetered)
      continuation.finish()
    }
  }
}
