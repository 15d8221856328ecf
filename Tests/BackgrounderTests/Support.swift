import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Testing

/// A dispatch loop hook (``Backgrounder/Configuration/dispatchLoopWillIterate``) that blocks
/// every iteration from ``stall()`` until ``release()``, as a hung dispatcher would.
final class LoopStall: Sendable {
  private let stalled = Lock(false)
  private let released = AsyncStream<Void>.makeStream()

  func stall() { stalled.withLock { $0 = true } }
  /// Lets the loop go on; call it before the runtime stops, which waits for the loop.
  func release() { released.continuation.finish() }

  @Sendable func willIterate() async {
    if stalled.withLock({ $0 }) { for await _ in released.stream {} }
  }
}

/// A runtime on a temporary store with a manual clock and fake condition sources.
struct Harness {
  let clock: ManualClock
  let network: FakeNetworkSource
  let power: FakePowerSource
  let directory: URL
  let backgrounder: Backgrounder
  let recorder: EventRecorder
  let driver: TestDriver
  let mounts: FakeMountSource
  /// The `requiredReachable` destinations (nothing checked until a test sets them).
  let destinations: FakeDestinationSource
  /// The user's idle state for `requiresIdle` (not known until a test sets it).
  let userIdle: FakeUserIdleSource

  var storePath: String { directory.appendingPathComponent("store.sqlite").path }
  var t0: Date

  /// Creates, registers `workers` and starts a runtime, stopped when the test ends (the suite
  /// needs the `.stopsRuntimes` trait).
  static func start(
    workers: [TaskId: any Worker], network: NetworkConditions = .unmetered,
    power: PowerConditions = .externalPower, concurrencyLimit: Int = 4,
    gracePeriod: Duration = .seconds(10), directory: URL? = nil, clock: ManualClock? = nil,
    expeditedQuota: ExpeditedQuota? = nil, fallback: (any Worker)? = nil,
    dispatchesWork: Bool = true, watchesClockChanges: Bool = false,
    clockChanges: (any ClockChangeSource)? = nil,
    networkSource: (any NetworkConditionSource)? = nil, timeZone: CalendarTimeZone = .utc,
    mounts: MountConditions = .unconfigured,
    onWaitChange: (@Sendable (TaskId, [PendingPredicate], Date) -> Void)? = nil,
    dispatchLoopWillIterate: (@Sendable () async -> Void)? = nil
  ) async throws -> Harness {
    let mountSource = FakeMountSource(mounts)
    let clock = clock ?? ManualClock()
    let directory = directory ?? temporaryDirectory()
    let fakeNetwork = FakeNetworkSource(network)
    let powerSource = FakePowerSource(power)
    var configuration = Backgrounder.Configuration(
      storePath: directory.appendingPathComponent("store.sqlite").path, clock: clock,
      network: networkSource ?? fakeNetwork, power: powerSource, concurrencyLimit: concurrencyLimit,
      gracePeriod: gracePeriod, expeditedQuota: expeditedQuota, durability: .normal,
      jitterSeed: 1)
    configuration.dispatchesWork = dispatchesWork
    configuration.timeZone = timeZone
    configuration.mounts = mountSource
    configuration.onWaitChange = onWaitChange
    configuration.dispatchLoopWillIterate = dispatchLoopWillIterate
    let destinationSource = FakeDestinationSource(.unconfigured)
    configuration.destinations = destinationSource
    let userIdleSource = FakeUserIdleSource(.unconfigured)
    configuration.userIdle = userIdleSource
    if watchesClockChanges { configuration.clockChanges = clock }
    if let clockChanges { configuration.clockChanges = clockChanges }
    let backgrounder = Backgrounder(configuration: configuration)
    for (id, worker) in workers {
      try backgrounder.register(id) { worker }
    }
    if let fallback { try backgrounder.registerFallback { _ in fallback } }
    let recorder = EventRecorder(backgrounder)
    let harness = Harness(
      clock: clock, network: fakeNetwork, power: powerSource, directory: directory,
      backgrounder: backgrounder, recorder: recorder, driver: TestDriver(backgrounder),
      mounts: mountSource, destinations: destinationSource, userIdle: userIdleSource,
      t0: clock.date)
    RunningRuntimes.forRunningTest().stopAtEnd { await harness.stop() }
    try await backgrounder.start()
    return harness
  }

  func stop(removeFiles: Bool = true) async {
    await backgrounder.shutdown()
    if removeFiles { try? FileManager.default.removeItem(at: directory) }
  }

  func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

  /// Schedules one-time work for every id in `jobs` concurrently, expects each to be accepted,
  /// and waits until all of them completed (the commits flushed).
  func scheduleAllAndWaitForCompletion(_ jobs: [TaskId]) async {
    await withTaskGroup(of: ScheduleOutcome.self) { group in
      for job in jobs {
        group.addTask { await backgrounder.schedule(WorkRequest.OneTime(taskId: job)) }
      }
      for await outcome in group { #expect(outcome == .scheduled) }
    }
    await recorder.wait(count: jobs.count) { $0.kind.isWorkCompleted }
    await driver.flush()
  }

  func task(_ id: TaskId) -> ScheduledTask? {
    backgrounder.scheduled().first { $0.taskId == id }
  }

  func status(_ id: TaskId) async throws -> TaskStatus? {
    await driver.flush()
    return try TaskStoreReader(path: storePath).task(id, now: clock.date)
  }

  /// Waits for `count` events of `id` matching `predicate`. Bounded (2 minutes of real time,
  /// however slow a sanitizer makes the run): an event that never comes is a failed test, not a
  /// test run hung until CI's timeout kills it without a report (it did, when a run expired).
  @discardableResult
  func waitFor(
    _ id: TaskId, count: Int = 1, _ predicate: @escaping @Sendable (MonitorEvent.Kind) -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async -> [MonitorEvent] {
    let events = await recorder.wait(count: count, timeout: .seconds(120)) {
      $0.taskId == id && predicate($0.kind)
    }
    if events.count < count {
      let seen = recorder.events { $0.taskId == id }.map(\.kind)
      Issue.record(
        "waited 120 s for \(count) matching event(s) of \(id), saw \(events.count); its events: \(seen)",
        sourceLocation: sourceLocation)
    }
    return events
  }

  func events(_ id: TaskId, _ predicate: (MonitorEvent.Kind) -> Bool) -> [MonitorEvent] {
    recorder.events { $0.taskId == id && predicate($0.kind) }
  }
}

func temporaryDirectory() -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "bgtest-\(UUID().uuidString)")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

func id(_ text: String) -> TaskId {
  try! TaskId(text)
}

extension MonitorEvent.Kind {
  var isWorkStarted: Bool {
    if case .workStarted = self { true } else { false }
  }
  var isWorkCompleted: Bool {
    if case .workCompleted = self { true } else { false }
  }
  var isRetryScheduled: Bool {
    if case .retryScheduled = self { true } else { false }
  }
  var isRecordedResult: Bool {
    switch self {
    case .workCompleted, .attemptFailed(reason: .expired): true
    default: false
    }
  }
}

/// A worker that records each context and returns the results it is given in turn
/// (the last one repeats).
final class RecordingWorker: Worker {
  private let state: Lock<(contexts: [WorkContext], results: [WorkResult])>

  init(_ results: WorkResult...) {
    state = Lock(([], results.isEmpty ? [.success] : results))
  }

  var invocations: Int { state.withLock { $0.contexts.count } }
  var attempts: [Int] { state.withLock { $0.contexts.map(\.attempt) } }
  var contexts: [WorkContext] { state.withLock { $0.contexts } }

  func execute(_ context: WorkContext) async -> WorkResult {
    state.withLock { state in
      state.contexts.append(context)
      return state.results.count > 1 ? state.results.removeFirst() : state.results[0]
    }
  }
}

/// A worker that blocks until released (or cancelled, unless it ignores cancellation).
final class BlockingWorker: Worker {
  private struct State {
    var invocations = 0
    var released = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    var invocationWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    var stopReasons: [StopReason?] = []
    var cancelledRuns = 0
  }

  private let state = Lock(State())
  let ignoresCancellation: Bool
  let result: WorkResult

  init(ignoresCancellation: Bool = false, result: WorkResult = .success) {
    self.ignoresCancellation = ignoresCancellation
    self.result = result
  }

  var invocations: Int { state.withLock { $0.invocations } }
  var stopReasons: [StopReason?] { state.withLock { $0.stopReasons } }
  var cancelledRuns: Int { state.withLock { $0.cancelledRuns } }

  func release() {
    let waiters = state.withLock { state in
      state.released = true
      defer { state.waiters.removeAll() }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Waits until `execute` has been entered `count` times.
  func waitUntilInvoked(count: Int = 1) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.invocations >= count { return true }
        state.invocationWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  func execute(_ context: WorkContext) async -> WorkResult {
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.invocations += 1
      let count = state.invocations
      let ready = state.invocationWaiters.filter { $0.count <= count }.map(\.continuation)
      state.invocationWaiters.removeAll { $0.count <= count }
      return ready
    }
    for waiter in ready { waiter.resume() }
    if ignoresCancellation {
      await waitForRelease()
    } else {
      await withTaskCancellationHandler {
        await waitForRelease()
      } onCancel: {
        self.release()
      }
    }
    let cancelled = Task.isCancelled
    state.withLock { state in
      if cancelled {
        state.cancelledRuns += 1
        state.stopReasons.append(context.stopReason)
      }
    }
    return cancelled ? .retry : result
  }

  private func waitForRelease() async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.released { return true }
        state.waiters.append(continuation)
        return false
      }
      if ready { continuation.resume() }
    }
  }
}
