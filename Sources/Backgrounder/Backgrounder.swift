import Foundation
import Locking
import Logging
import SystemCalls

/// The background-work runtime: create → ``register(_:factory:)-(TaskId,_)`` → ``start()``.
///
/// Work is described by ``WorkRequest``s, kept in a durable SQLite store (WAL) and dispatched
/// by one in-process loop that sleeps until the soonest due time or a network / power change.
/// See docs/library.md for the semantics (network gate, backoff, coalescing, resurrection).
public final class Backgrounder: Sendable {
  /// A factory creating the worker for one run; `nil` declines (event `skipped(factoryDeclined)`).
  public typealias WorkerFactory = @Sendable (TaskId) throws -> (any Worker)?

  /// Everything a runtime is built from.
  public struct Configuration: Sendable {
    /// The SQLite store file (created if missing; its directory must exist).
    public var storePath: String
    /// The clock (wall-clock instants are persisted).
    public var clock: any WallClock
    /// Where the runtime logs.
    public var logger: Logger
    /// Network conditions for the gate and `networkRequired`. The default,
    /// ``UnconfiguredNetwork``, holds every network-requiring run and reports a health problem:
    /// pass the live sources (`LinuxConditionSources` in `BackgrounderLinux`), or
    /// ``AlwaysReachableNetwork`` for a program with no network constraint.
    public var network: any NetworkConditionSource
    /// Power conditions for `requiresCharging` / `requiresBatteryNotLow`. The default,
    /// ``UnconfiguredPower``, holds power-constrained runs and reports a health problem.
    public var power: any PowerConditionSource
    /// Mount points for `requiredMount`. The default, ``UnconfiguredMounts``, holds every run
    /// that requires a mount (unknown is not permission).
    public var mounts: any MountConditionSource = UnconfiguredMounts()
    /// Destinations for `requiredReachable`. The default, ``UnconfiguredDestinations``, holds
    /// every run that requires a reachable destination (unknown is not permission).
    public var destinations: any DestinationConditionSource = UnconfiguredDestinations()
    /// The user's idle state for `requiresIdle`. The default, ``UnconfiguredUserIdle``, holds
    /// every run that requires an idle user (unknown is not permission).
    public var userIdle: any UserIdleConditionSource = UnconfiguredUserIdle()
    /// Wall-clock steps and resumes from suspend; due times are re-evaluated on each. `nil`
    /// notices a jump only at the next wake-up.
    public var clockChanges: (any ClockChangeSource)?
    /// Workers running at once (≥ 1).
    public var concurrencyLimit: Int
    /// How long a cancelled worker may take to return before it is abandoned and reported.
    public var gracePeriod: Duration
    /// The shortest allowed periodic interval (default 1 minute).
    public var minimumPeriodicInterval: Duration
    /// A cap on expedited starts; `nil` means unlimited.
    public var expeditedQuota: ExpeditedQuota?
    /// Runs kept per task in the history.
    public var historyLimit: Int
    /// How long finished one-time tasks stay in the store (for status) before `start()` prunes
    /// them.
    public var finishedRetention: Duration
    /// fsync policy of the store.
    public var durability: StoreDurability
    /// Seed for backoff jitter (random when `nil`).
    public var jitterSeed: UInt64?
    /// When false the runtime only edits the store: it accepts `schedule` and `cancel` for any
    /// task id but never invokes a worker (what `backgrounder schedule` does with no daemon).
    public var dispatchesWork = true
    /// Called (on the store's commit thread) when a write is refused because ``storePath`` no
    /// longer names the file the runtime opened (deleted or replaced; error code
    /// ``StoreError/Code/replaced``). The runtime keeps refusing writes; a daemon should stop
    /// and start again on the new file.
    public var onStoreReplaced: (@Sendable (StoreError) -> Void)?
    /// Called when what a task waits for changes, with the time of the change: the predicates
    /// a due task is blocked on (the network, power, a mount, its window), or none once it
    /// starts, is cancelled or waits no more. Driven by the dispatcher's own writes (no
    /// polling); called outside the dispatcher's lock, one change at a time in the order the
    /// dispatcher made them, so keep it short and do not call back into the runtime from it.
    public var onWaitChange: (@Sendable (TaskId, [PendingPredicate], Date) -> Void)?
    /// The path SQLite opens when it is not ``storePath`` itself: for example
    /// `/proc/self/fd/N/state.sqlite` through a directory descriptor the caller holds open, so
    /// that renaming a directory of ``storePath`` after the caller checked it changes nothing.
    /// ``storePath`` is still the one messages and status name.
    public var storeOpenPath: String?
    /// The zone time windows (``WorkConstraints/windows``) are read in, and the local zone of
    /// calendar schedules loaded from the store: the machine's local zone by default.
    public var timeZone: CalendarTimeZone = CalendarTimeZones.local()
    /// Awaited at the top of every dispatch loop iteration, when set: an injection point for
    /// tests (one that blocks is a hung dispatcher, for a watchdog test). Whoever sets it must
    /// let it return for ``Backgrounder/shutdown()`` to finish. Not API.
    package var dispatchLoopWillIterate: (@Sendable () async -> Void)?
    /// Spreads the runs due at ``Backgrounder/start()`` and after a resume from sleep
    /// (``Backgrounder/systemSleeping(_:stopping:)`` with `false`) over a time (`start-splay`);
    /// `nil`: they start at once.
    public var startSplay: StartSplay?

    /// Creates a configuration; only the store path is required. Without a `network` source,
    /// work that needs the network is held (unknown is not permission).
    public init(
      storePath: String, clock: any WallClock = SystemWallClock(),
      logger: Logger = Logger(label: "backgrounder"),
      network: any NetworkConditionSource = UnconfiguredNetwork(),
      power: any PowerConditionSource = UnconfiguredPower(), concurrencyLimit: Int = 4,
      gracePeriod: Duration = .seconds(10), minimumPeriodicInterval: Duration = .seconds(60),
      expeditedQuota: ExpeditedQuota? = nil, historyLimit: Int = 20,
      finishedRetention: Duration = .seconds(7 * 86_400), durability: StoreDurability = .full,
      jitterSeed: UInt64? = nil
    ) {
      self.storePath = storePath
      self.clock = clock
      self.logger = logger
      self.network = network
      self.power = power
      self.concurrencyLimit = concurrencyLimit
      self.gracePeriod = gracePeriod
      self.minimumPeriodicInterval = minimumPeriodicInterval
      self.expeditedQuota = expeditedQuota
      self.historyLimit = historyLimit
      self.finishedRetention = finishedRetention
      self.durability = durability
      self.jitterSeed = jitterSeed
    }
  }

  private enum Lifecycle {
    case configuring([TaskId: WorkerFactory])
    case starting(Task<Runtime, any Error>)
    case running(Runtime)
    case stopping(Task<Void, Never>)
    case stopped
  }

  /// The configuration this runtime was created with.
  public let configuration: Configuration
  private let lifecycle = Lock(Lifecycle.configuring([:]))
  private let hub = EventHub()
  private let health = HealthRecorder()
  private let fallbackFactory = Lock<WorkerFactory?>(nil)

  /// Creates a runtime; nothing is opened until ``start()``.
  public init(configuration: Configuration) {
    self.configuration = configuration
  }

  /// Creates a runtime with the given store and defaults for everything else.
  public convenience init(storePath: String) {
    self.init(configuration: Configuration(storePath: storePath))
  }

  // MARK: - Registration

  /// Registers the worker factory for `taskId`. Must happen before ``start()``.
  public func register(
    _ taskId: TaskId, factory: @escaping @Sendable () throws -> (any Worker)?
  ) throws(RegistrationError) {
    try register([taskId]) { _ in try factory() }
  }

  /// Registers one factory for many ids (it receives the id of the run). Must happen before
  /// ``start()``; either every id is registered or none.
  /// - Throws: ``RegistrationError/noTaskIds`` for an empty list,
  ///   ``RegistrationError/duplicate(_:)`` for an id registered twice,
  ///   ``RegistrationError/alreadyStarted`` after ``start()``.
  public func register(
    _ taskIds: [TaskId], factory: @escaping WorkerFactory
  ) throws(RegistrationError) {
    if taskIds.isEmpty { throw .noTaskIds }
    let result = lifecycle.withLock { state -> RegistrationError? in
      guard case .configuring(var factories) = state else { return .alreadyStarted }
      var seen = Set<TaskId>()
      for id in taskIds {
        if factories[id] != nil || !seen.insert(id).inserted { return .duplicate(id) }
      }
      for id in taskIds { factories[id] = factory }
      state = .configuring(factories)
      return nil
    }
    if let result { throw result }
  }

  /// Registers a factory for every task id without a factory of its own, for hosts whose task
  /// ids are data rather than code (the `backgrounder` daemon's jobs). Must happen before
  /// ``start()``; at most once.
  public func registerFallback(_ factory: @escaping WorkerFactory) throws(RegistrationError) {
    let result = lifecycle.withLock { state -> RegistrationError? in
      guard case .configuring = state else { return .alreadyStarted }
      return fallbackFactory.withLock { existing in
        guard existing == nil else { return .duplicateFallback }
        existing = factory
        return nil
      }
    }
    if let result { throw result }
  }

  /// The registered task ids, sorted.
  public func registeredTaskIds() -> [TaskId] {
    lifecycle.withLock { state -> [TaskId] in
      switch state {
      case .configuring(let factories): factories.keys.sorted()
      case .running(let runtime): runtime.factories.keys.sorted()
      case .starting, .stopping, .stopped: []
      }
    }
  }

  // MARK: - Lifecycle

  /// Opens the store, sweeps ephemeral work, resurrects persisted tasks (an interrupted run
  /// becomes a counted retry) and starts dispatch. Idempotent; concurrent calls share one start.
  /// - Throws: ``StoreError`` when the store cannot be used (it is never deleted or rewritten),
  ///   ``LifecycleError/shutDown`` after ``shutdown()``.
  public func start() async throws {
    let task = lifecycle.withLock { state -> Task<Runtime, any Error>? in
      switch state {
      case .configuring(let factories):
        let configuration = configuration
        let hub = hub
        let health = health
        let fallback = fallbackFactory.withLock { $0 }
        // Opening, migrating and sweeping the store block on SQLite and `fsync`: on a thread
        // of their own, not one of the concurrency pool's few (with several stores opening at
        // once, the pool's every thread waited on disks while timers and tasks queued).
        let task = Task {
          try await SystemThread.runBlocking(name: "bg-store-open") {
            try Self.makeRuntime(
              configuration, factories: factories, fallback: fallback, hub: hub, health: health)
          }
        }
        state = .starting(task)
        return task
      case .starting(let task): return task
      case .running, .stopping, .stopped: return nil
      }
    }
    guard let task else {
      if isStoppedOrStopping { throw LifecycleError.shutDown }
      return
    }
    do {
      let runtime = try await task.value
      lifecycle.withLock { state in
        if case .starting = state { state = .running(runtime) }
      }
    } catch {
      lifecycle.withLock { state in
        if case .starting = state { state = .stopped }
      }
      if let error = error as? StoreError { health.startFailed(error, at: configuration.clock.now) }
      throw error
    }
  }

  private var isStoppedOrStopping: Bool {
    lifecycle.withLock { state in
      switch state {
      case .stopping, .stopped: true
      default: false
      }
    }
  }

  private static func makeRuntime(
    _ configuration: Configuration, factories: [TaskId: WorkerFactory],
    fallback: WorkerFactory?, hub: EventHub, health: HealthRecorder
  ) throws -> Runtime {
    let clock = configuration.clock
    let store = try TaskStore.open(
      path: configuration.storeOpenPath ?? configuration.storePath,
      displayPath: configuration.storePath, durability: configuration.durability,
      historyLimit: configuration.historyLimit, onReplaced: configuration.onStoreReplaced)
    let now = clock.now
    let (swept, rows) = try store.sweepAndLoad(
      finishedBefore: now.advanced(by: .zero - configuration.finishedRetention))
    let settings = DispatchSettings(
      concurrencyLimit: max(1, configuration.concurrencyLimit),
      minimumPeriodicInterval: configuration.minimumPeriodicInterval,
      expeditedQuota: configuration.expeditedQuota,
      claimAhead: DispatchSettings.claimAhead(concurrencyLimit: configuration.concurrencyLimit),
      timeZone: configuration.timeZone)
    let machine = DispatchStateMachine(
      settings: settings, registered: Set(factories.keys),
      acceptsAnyTask: fallback != nil || !configuration.dispatchesWork,
      network: configuration.network.current, power: configuration.power.current,
      seed: configuration.jitterSeed ?? UInt64.random(in: .min ... .max),
      mounts: configuration.mounts.current)
    let runtime = Runtime(
      configuration: configuration, factories: factories, fallback: fallback, store: store,
      events: hub, health: health,
      machine: machine)
    runtime.step { machine, now in
      var effects = machine.load(rows, now: now)
      if let splay = configuration.startSplay {
        machine.spreadCatchUp(
          splay, ids: DispatchStateMachine.dueWhileOff(rows, now: now), now: now)
      }
      effects.events =
        swept.map { machine.event($0, .skipped(reason: .ephemeralExpired), now) } + effects.events
      return ((), effects)
    }
    configuration.logger.info(
      "backgrounder started",
      metadata: [
        "store": "\(configuration.storePath)", "tasks": "\(rows.count)",
        "ephemeralSwept": "\(swept.count)",
      ])
    if configuration.dispatchesWork { runtime.startLoop() }
    return runtime
  }

  /// Stops dispatch: running workers are cancelled (recorded as retries that resume after the
  /// next start), the store is flushed and closed, and `events()` streams finish. Idempotent.
  public func shutdown() async {
    let action = lifecycle.withLock { state -> (Task<Void, Never>?, Task<Runtime, any Error>?) in
      switch state {
      case .configuring:
        state = .stopped
        return (nil, nil)
      case .starting(let start):
        return (nil, start)
      case .running(let runtime):
        let hub = hub
        let task = Task {
          await runtime.shutdown()
          hub.finish()
        }
        state = .stopping(task)
        return (task, nil)
      case .stopping(let task):
        return (task, nil)
      case .stopped:
        return (nil, nil)
      }
    }
    if let start = action.1 {
      let runtime = try? await start.value
      lifecycle.withLock { state in
        if case .starting = state { state = runtime.map { .running($0) } ?? .stopped }
      }
      await shutdown()
      return
    }
    if let task = action.0 {
      await task.value
      lifecycle.withLock { $0 = .stopped }
    } else {
      hub.finish()
    }
  }

  var runtime: Runtime? {
    lifecycle.withLock { state in
      if case .running(let runtime) = state { runtime } else { nil }
    }
  }

  // MARK: - Work

  /// Schedules `request`. When this returns `.scheduled`, the request is durable. The outcome
  /// may be ignored where a refusal is not expected (a fixed, valid request); check it for
  /// `.rejected` when the request is built from input.
  ///
  /// A request breaking a limit is rejected with the reason: an input key that is empty or an
  /// input over 10,240 bytes serialized, a backoff policy outside its ranges (initial delay
  /// 10 s…5 h, attempts 1…30, jitter 0…1), a budget that is not positive, a negative initial
  /// delay, a periodic interval below the minimum, a flex window outside (0, interval).
  @discardableResult
  public func schedule(
    _ request: WorkRequest, policy: ExistingWorkPolicy = .replace
  ) async -> ScheduleOutcome {
    await schedule([(request, policy)])[0]
  }

  /// Schedules each request with its policy, as ``schedule(_:policy:)-(WorkRequest,_)`` does
  /// one, with one outcome per request in order, in one step of the dispatcher and one store
  /// transaction (a daemon applying its config schedules every job at once: one commit, not
  /// one per job). When this returns, every `.scheduled` request is durable.
  public func schedule(
    _ requests: [(WorkRequest, ExistingWorkPolicy)]
  ) async -> [ScheduleOutcome] {
    var (outcomes, pending) = enqueueSchedules(requests)
    if let pending {
      do {
        try await pending.runtime.writer.waitCommitted(pending.sequence)
      } catch {
        Self.withdraw(pending, from: &outcomes, because: error)
      }
    }
    return outcomes
  }

  /// Requests that went through the dispatcher's step as `.scheduled`, waiting for the
  /// transaction that makes them durable: all `schedule` keeps across its suspension.
  private struct PendingSchedules {
    var runtime: Runtime
    var sequence: StoreWriter.Sequence
    var scheduled: [(index: Int, taskId: TaskId)]
  }

  /// The synchronous part of ``schedule(_:)-([(WorkRequest,ExistingWorkPolicy)])``: each
  /// request checked, the accepted ones handed to the dispatcher in one step. Not inlined into
  /// the async caller, whose frame lives on the task's allocator until the commit: with the
  /// step's values in it, it took 7.6 KB per call, 76 MB for 10,000 callers waiting at once
  /// (heaptrack of `StoreBenchmark 10000`).
  @inline(never)
  private func enqueueSchedules(
    _ requests: [(WorkRequest, ExistingWorkPolicy)]
  ) -> ([ScheduleOutcome], PendingSchedules?) {
    var outcomes: [ScheduleOutcome?] = Array(repeating: nil, count: requests.count)
    var accepted: [(index: Int, request: WorkRequest, input: Data, policy: ExistingWorkPolicy)] =
      []
    for (index, (request, policy)) in requests.enumerated() {
      if let problem = request.problem(
        minimumPeriodicInterval: configuration.minimumPeriodicInterval)
      {
        outcomes[index] = .rejected(problem)
        continue
      }
      let input: Data
      do {
        input = try request.input.serialized()
      } catch {
        outcomes[index] = .rejected(.inputNotSerializable("\(error)"))
        continue
      }
      if input.count > WorkInput.maximumSerializedSize {
        outcomes[index] = .rejected(.inputTooLarge(bytes: input.count))
        continue
      }
      accepted.append((index, request, input, policy))
    }
    guard let runtime else {
      let reason: RejectionReason = isStoppedOrStopping ? .shutDown : .notStarted
      return (outcomes.map { $0 ?? .rejected(reason) }, nil)
    }
    var pending: PendingSchedules?
    if !accepted.isEmpty {
      let step = runtime.step { machine, now in
        var effects = Effects()
        var values: [ScheduleOutcome] = []
        values.reserveCapacity(accepted.count)
        for (_, request, input, policy) in accepted {
          let (value, more) = machine.schedule(
            TaskRow(request: request, input: input, now: now), policy: policy, now: now)
          values.append(value)
          effects.append(more)
        }
        return (values, effects)
      }
      var scheduled: [(index: Int, taskId: TaskId)] = []
      for (position, value) in step.value.enumerated() {
        outcomes[accepted[position].index] = value
        if value == .scheduled {
          scheduled.append((accepted[position].index, accepted[position].request.taskId))
        }
      }
      if !scheduled.isEmpty {
        runtime.wake.fire()
        pending = PendingSchedules(runtime: runtime, sequence: step.sequence, scheduled: scheduled)
      }
    }
    // Every outcome is set: each request was rejected above or went through the step.
    return (outcomes.map { $0 ?? .rejected(.notStarted) }, pending)
  }

  /// Takes back the requests of `pending` whose transaction failed: cancelled in the
  /// dispatcher, and rejected with the store's error.
  @inline(never)
  private static func withdraw(
    _ pending: PendingSchedules, from outcomes: inout [ScheduleOutcome], because error: any Error
  ) {
    let ids = pending.scheduled.map(\.taskId)
    pending.runtime.step { machine, now in
      var effects = Effects()
      for id in ids { effects.append(machine.cancel(id, now: now).1) }
      return ((), effects)
    }
    for (index, _) in pending.scheduled {
      outcomes[index] = .rejected(.storeFailure("\(error)"))
    }
  }

  /// Schedules a one-time request.
  @discardableResult
  public func schedule(
    _ request: WorkRequest.OneTime, policy: ExistingWorkPolicy = .replace
  ) async -> ScheduleOutcome {
    await schedule(.oneTime(request), policy: policy)
  }

  /// Schedules a periodic request.
  @discardableResult
  public func schedule(
    _ request: WorkRequest.Periodic, policy: ExistingWorkPolicy = .replace
  ) async -> ScheduleOutcome {
    await schedule(.periodic(request), policy: policy)
  }

  /// Cancels a task: it is removed from the store and a running worker is cancelled.
  public func cancel(_ taskId: TaskId) async -> CancelOutcome {
    guard let runtime else { return .noSuchTask }
    let step = runtime.step { machine, now in machine.cancel(taskId, now: now) }
    do {
      try await runtime.writer.waitCommitted(step.sequence)
    } catch {
      return .storeFailure("\(error)")
    }
    return step.value
  }

  /// Cancels every task; returns how many were active.
  @discardableResult
  public func cancelAll() async -> Int {
    guard let runtime else { return 0 }
    let step = runtime.step { machine, now in machine.cancelAll(now: now) }
    try? await runtime.writer.waitCommitted(step.sequence)
    return step.value
  }

  /// Runs a task now, bypassing its constraints and backoff. Calls before the dispatch
  /// coalesce into one run; a call while a run is in flight starts nothing.
  @discardableResult
  public func runNow(_ taskId: TaskId) -> RunNowOutcome {
    guard let runtime else { return .notRunning }
    let outcome = runtime.step { machine, _ in (machine.runNow(taskId), Effects()) }.value
    if outcome == .triggered { runtime.wake.fire() }
    return outcome
  }

  /// Re-evaluates due work now (for an external trigger). Never starts a second run of a task
  /// whose run is in flight or whose next run is not due.
  public func dispatchNow() {
    runtime?.wake.fire()
  }

  /// Expires `taskId`'s running worker now, on request: the worker is cancelled and the run is
  /// recorded as a retry with `attemptFailed(expired)` and the reason "expired on request"
  /// (an attempt is used, as when the budget runs out). Returns `false` when no worker of that
  /// task is running.
  @discardableResult
  public func expire(_ taskId: TaskId) -> Bool {
    guard let handle = runtime?.runningHandle(taskId) else { return false }
    handle.expire(onRequest: true)
    return true
  }

  /// How far the dispatch loop got, for a watchdog: see ``DispatchLoopProgress``.
  public func dispatchLoopProgress() -> DispatchLoopProgress? {
    runtime?.progress
  }

  // MARK: - Observation

  /// Every task in the store — active and recently finished — with its input, read through
  /// the runtime's own connection pool after all accepted changes are committed (on a thread
  /// of its own: see `TaskStore.read`).
  /// Only the tasks of `ids` (those stored) when given; without their inputs (empty) when
  /// `includingInput` is false.
  public func storedTasks(
    historyLimit: Int = 5, includingInput: Bool = true, of ids: Set<TaskId>? = nil
  ) async throws -> [TaskStatus] {
    guard let runtime else { throw LifecycleError.notStarted }
    await runtime.writer.flush()
    let now = configuration.clock.now.date
    return try await runtime.store.read { db in
      try TaskStatusQuery.all(
        db, now: now, historyLimit: historyLimit, includingInput: includingInput, of: ids)
    }
  }

  /// The active tasks with their state and what they wait for.
  public func scheduled() -> [ScheduledTask] {
    guard let runtime else { return [] }
    return runtime.core.withLock { core in
      core.machine.snapshot(now: configuration.clock.now)
    }
  }

  /// A new, independent stream of events. It finishes at ``shutdown()``.
  ///
  /// - Parameter isIncluded: the events the stream takes; the others never enter its buffer
  ///   (a stream buffers every event emitted while its reader is busy, and keeps the buffer's
  ///   largest size for good: a subscriber that needs a few kinds of event need not).
  public func events(
    bufferingPolicy: AsyncStream<MonitorEvent>.Continuation.BufferingPolicy = .unbounded,
    where isIncluded: @escaping @Sendable (MonitorEvent) -> Bool = { _ in true }
  ) -> AsyncStream<MonitorEvent> {
    hub.subscribe(bufferingPolicy: bufferingPolicy, where: isIncluded)
  }

  /// What this runtime promises.
  public func guarantees() -> Guarantees {
    Guarantees(
      survivesProcessDeath: true, survivesReboot: true, survivesForceQuit: true,
      honoursWallClock: true, supportsRetryBackoff: true, cancelsInFlight: true,
      honoursPowerConstraints: true, honoursNetworkConstraints: true,
      minimumPeriodicInterval: configuration.minimumPeriodicInterval,
      maxConcurrentTasks: max(1, configuration.concurrencyLimit))
  }

  /// Gives back the memory the store's connection keeps between writes (SQLite's page cache,
  /// up to 512 KiB, and prepared statements), for a long-running process that falls idle: the
  /// next write reads its pages again from the operating system's cache. Waits for a commit in
  /// progress; does nothing unless the runtime is running.
  public func releaseStoreMemory() {
    runtime?.store.releaseMemory()
  }

  /// The runtime's state and the problems it detected (``Diagnostics/problems``; healthy when
  /// there are none): store write errors, condition sources that ended or never reported,
  /// workers abandoned after ignoring cancellation, runs stuck past their budget and grace
  /// period, and clock jumps recorded with ``recordClockJump(offset:)``.
  public func diagnostics() -> Diagnostics {
    let runtime = runtime
    let machine = runtime?.core.withLock { $0.machine }
    let statistics = runtime?.writer.statistics
    let now = configuration.clock.now
    var problems: [HealthProblem] = []
    if let lastError = statistics?.lastError {
      problems.append(HealthProblem(kind: .storeError, detectedAt: nil, message: lastError))
    }
    problems += health.problems(now: now)
    if configuration.network is UnconfiguredNetwork {
      problems.append(
        HealthProblem(
          kind: .networkSourceMissing, detectedAt: nil,
          message: "no network source is configured: work that needs the network is held; "
            + "pass the live sources (LinuxConditionSources), or AlwaysReachableNetwork for a "
            + "program without network constraints"))
    }
    if configuration.power is UnconfiguredPower {
      problems.append(
        HealthProblem(
          kind: .powerSourceMissing, detectedAt: nil,
          message: "no power source is configured: work that requires charging or a battery "
            + "that is not low is held; pass the live sources (LinuxConditionSources), or "
            + "AlwaysExternalPower for a program without power constraints"))
    }
    if let machine {
      problems += Self.stuckRuns(machine, now: now, grace: configuration.gracePeriod)
    }
    return Diagnostics(
      storePath: configuration.storePath, isRunning: runtime != nil,
      registeredTaskIds: registeredTaskIds(), activeTasks: machine?.entries.count ?? 0,
      runsInFlight: machine?.runsInSlots ?? 0, abandonedWorkers: machine?.abandonedWorkers ?? 0,
      network: machine?.network ?? configuration.network.current,
      power: machine?.power ?? configuration.power.current,
      storeCommits: statistics?.commits ?? 0, storeOperations: statistics?.operations ?? 0,
      storeWriteTime: statistics?.writeTime ?? .zero, lastStoreError: statistics?.lastError,
      problems: problems)
  }

  /// Whether ``diagnostics()`` finds no problem.
  public var isHealthy: Bool { diagnostics().isHealthy }

  /// Records that the wall clock was set (stepped) while running, so that ``diagnostics()``
  /// reports it; `offset` is how far it moved, when known. For a clock-change watcher (such
  /// as a `timerfd` with `TFD_TIMER_CANCEL_ON_SET`).
  public func recordClockJump(offset: Duration? = nil) {
    health.clockJumped(at: configuration.clock.now, offset: offset)
  }

  private static func stuckRuns(
    _ machine: DispatchStateMachine, now: WallInstant, grace: Duration
  ) -> [HealthProblem] {
    machine.entries.values.compactMap { entry -> HealthProblem? in
      guard let startedAt = entry.run?.startedAt else { return nil }
      // The runtime ends such a run at budget + grace; a second's margin keeps that ordinary
      // ending from being reported while it is being recorded.
      let limit = startedAt.advanced(by: entry.row.budget).advanced(by: grace)
        .advanced(by: .seconds(1))
      guard limit < now else { return nil }
      return HealthProblem(
        kind: .taskStuck, taskId: entry.row.id, detectedAt: now.date,
        message: "running since \(ISO8601.string(startedAt.date)), past its budget of "
          + "\(entry.row.budget) and the grace period of \(grace)")
    }.sorted { ($0.taskId?.rawValue ?? "") < ($1.taskId?.rawValue ?? "") }
  }
}
