import Foundation
import Locking
import Logging

/// The thin async driver around ``DispatchStateMachine``: it owns the store writer, the
/// dispatch loop, the condition subscriptions and the run controllers. Every decision is taken
/// by the state machine under `core`'s lock; this type only performs the effects.
final class Runtime: Sendable {
  typealias Factory = @Sendable (TaskId) throws -> (any Worker)?

  struct Core: Sendable {
    var machine: DispatchStateMachine
    /// The handles of the runs started (claims made ahead get one when promoted).
    var handles: [RunToken: RunHandle] = [:]
    /// Runs to start that a run's own task could not take on (for the loop to start).
    var unstarted: [(RunTicket, RunHandle)] = []
    /// What each task waits for, as last written (for ``Backgrounder/Configuration/onWaitChange``).
    var waits = WaitChanges()
    /// The wait changes of steps taken and not yet told, in step order, with each step's time.
    var untoldWaits: [([WaitChanges.Change], Date)] = []
    /// The clock changes applied so far (``ClockChangeSource/changeCount``).
    var clockChanges: UInt64 = 0
  }

  struct Step<Value: Sendable>: Sendable {
    var value: Value
    var sequence: StoreWriter.Sequence
    var tickets: [(RunTicket, RunHandle)]
  }

  let configuration: Backgrounder.Configuration
  let factories: [TaskId: Factory]
  /// The factory for ids without their own, if one was registered.
  let fallback: Factory?
  let store: TaskStore
  let writer: StoreWriter
  let events: EventHub
  let health: HealthRecorder
  let core: Lock<Core>
  let wake = WakeSignal()
  /// Held while wait changes are told (``step(_:)``), so that they are told in step order.
  private let tellingWaits = Lock(())
  /// The budgets of the runs in flight (``invoke(_:_:attempt:startedAt:)``).
  private let budgets = BudgetWatch()
  private let loop = Lock<Task<Void, Never>?>(nil)
  private let iterations = Lock<UInt64>(0)
  private var clock: any WallClock { configuration.clock }
  private var logger: Logger { configuration.logger }

  init(
    configuration: Backgrounder.Configuration, factories: [TaskId: Factory], fallback: Factory?,
    store: TaskStore,
    events: EventHub, health: HealthRecorder, machine: DispatchStateMachine
  ) {
    self.configuration = configuration
    self.factories = factories
    self.fallback = fallback
    self.store = store
    self.events = events
    self.health = health
    self.writer = StoreWriter(store: store, events: events)
    self.core = Lock(Core(machine: machine))
  }

  /// Runs one state-machine step under the lock, enqueues its store changes and events in
  /// decision order, then performs its gate releases and stops.
  @discardableResult
  func step<Value: Sendable>(
    _ body: (inout DispatchStateMachine, WallInstant) -> (Value, Effects)
  ) -> Step<Value> {
    let onWaitChange = configuration.onWaitChange
    let (result, releases, stops, waitsChanged, pauses) = core.withLock {
      core -> (Step<Value>, [RunHandle], [(RunHandle, StopReason)], Bool, [(RunHandle, RunToken)])
      in
      let now = clock.now
      // A wall clock change first, whether or not its stream element has come: the body must
      // not see a stepped-over calendar elapse as overdue.
      var effects = Effects()
      if let changes = configuration.clockChanges?.changeCount, changes != core.clockChanges {
        core.clockChanges = changes
        logger.info("wall clock changed: re-evaluating due times")
        effects = core.machine.clockChanged(now: now)
      }
      let (value, bodyEffects) = body(&core.machine, now)
      effects.append(bodyEffects)
      let waits = onWaitChange == nil ? [] : core.waits.changes(in: effects.ops)
      if !waits.isEmpty { core.untoldWaits.append((waits, now.date)) }
      let sequence = writer.enqueue(effects.ops, events: effects.events)
      var tickets: [(RunTicket, RunHandle)] = []
      for var ticket in effects.tickets {
        if ticket.claimedAhead {
          core.machine.claimEnqueued(ticket.token, at: sequence)
          continue
        }
        ticket.claimSequence = sequence
        let handle = RunHandle()
        core.handles[ticket.token] = handle
        tickets.append((ticket, handle))
      }
      for ticket in effects.promotions {
        let handle = RunHandle()
        core.handles[ticket.token] = handle
        tickets.append((ticket, handle))
      }
      let releases = effects.gateReleases.compactMap { core.handles[$0] }
      let stops = effects.stops.compactMap { token, reason in
        core.handles[token].map { ($0, reason) }
      }
      let pauses = (effects.pauses.map(\.0) + effects.resumes).compactMap { token in
        core.handles[token].map { ($0, token) }
      }
      return (
        Step(value: value, sequence: sequence, tickets: tickets), releases, stops,
        !waits.isEmpty, pauses
      )
    }
    if let onWaitChange, waitsChanged {
      // Told outside the dispatcher's lock, yet in step order: whichever step gets here first
      // tells every change untold so far. (Each step told its own after the lock: two steps on
      // two threads could tell theirs the wrong way round, a task's start before its block.)
      tellingWaits.withLock { _ in
        let untold = core.withLock { core in
          defer { core.untoldWaits = [] }
          return core.untoldWaits
        }
        for (changes, time) in untold {
          for change in changes { onWaitChange(change.task, change.predicates, time) }
        }
      }
    }
    for handle in releases { handle.gate.resolve(.passed) }
    for (handle, reason) in stops { handle.stop(reason) }
    // Each run is brought to the state the machine wants now, whatever order steps end in.
    for (handle, token) in pauses {
      handle.syncPause { core.withLock { $0.machine.pauseReason(token) } }
    }
    return result
  }

  // MARK: - Loop

  func startLoop() {
    let task = Task { await self.runLoop() }
    loop.withLock { $0 = task }
  }

  func waitForLoop() async {
    await loop.withLock { $0 }?.value
  }

  private func runLoop() async {
    await withTaskGroup(of: Void.self) { subscriptions in
      subscriptions.addTask { await self.budgets.run(clock: self.clock) }
      let network = configuration.network
      let power = configuration.power
      subscriptions.addTask {
        self.health.subscribed(.network, at: self.clock.now)
        await Self.follow(network.updates()) { conditions in
          self.health.reported(.network)
          self.step { machine, now in ((), machine.networkChanged(conditions, now: now)) }
          self.wake.fire()
        }
        if !Task.isCancelled { self.health.ended(.network, at: self.clock.now) }
      }
      subscriptions.addTask {
        self.health.subscribed(.power, at: self.clock.now)
        await Self.follow(power.updates()) { conditions in
          self.health.reported(.power)
          self.step { machine, now in ((), machine.powerChanged(conditions, now: now)) }
          self.wake.fire()
        }
        if !Task.isCancelled { self.health.ended(.power, at: self.clock.now) }
      }
      let mounts = configuration.mounts
      subscriptions.addTask {
        await Self.follow(mounts.updates()) { conditions in
          self.step { machine, now in ((), machine.mountsChanged(conditions, now: now)) }
          self.wake.fire()
        }
      }
      let destinations = configuration.destinations
      subscriptions.addTask {
        await Self.follow(destinations.updates()) { conditions in
          self.step { machine, now in ((), machine.destinationsChanged(conditions, now: now)) }
          self.wake.fire()
        }
      }
      let userIdle = configuration.userIdle
      subscriptions.addTask {
        await Self.follow(userIdle.updates()) { conditions in
          self.step { machine, now in ((), machine.userIdleChanged(conditions, now: now)) }
          self.wake.fire()
        }
      }
      // Subscribed before the first iteration, so no change after that is missed.
      if let clockChanges = configuration.clockChanges?.clockChanges() {
        subscriptions.addTask {
          for await _ in clockChanges {
            // The step applies the change (see ``step(_:)``), unless one did already.
            self.step { _, _ in ((), Effects()) }
            self.wake.fire()
          }
        }
      }
      await withDiscardingTaskGroup { runs in
        while true {
          iterations.withLock { $0 &+= 1 }
          if let willIterate = configuration.dispatchLoopWillIterate { await willIterate() }
          let plan = step { machine, now in
            let (effects, wakeAt) = machine.dispatch(now: now)
            return ((wakeAt: wakeAt, accepting: machine.accepting), effects)
          }
          let unstarted = core.withLock { core in
            defer { core.unstarted = [] }
            return core.unstarted
          }
          for (ticket, handle) in plan.tickets + unstarted {
            runs.addTask { await self.execute(ticket, handle) }
          }
          if !plan.value.accepting { break }
          let timer = plan.value.wakeAt.map { deadline in
            Task { [clock, wake] in
              do {
                try await clock.sleep(until: deadline, tolerance: nil)
                wake.fire()
              } catch {}
            }
          }
          await wake.wait()
          timer?.cancel()
        }
      }
      subscriptions.cancelAll()
    }
  }

  /// Hands each element of `updates` to `body`, in the calling task, until `updates` ends.
  /// Generic so that a source's sequence (an existential from the configuration) is opened
  /// once and iterated without boxing each element.
  private static func follow<Updates: AsyncSequence & Sendable>(
    _ updates: Updates, _ body: (Updates.Element) -> Void
  ) async where Updates.Failure == Never {
    for await element in updates { body(element) }
  }

  /// How far the loop got, for a watchdog.
  var progress: DispatchLoopProgress {
    DispatchLoopProgress(iterations: iterations.withLock { $0 }, isIdle: wake.isWaiting)
  }

  // MARK: - One run

  /// Carries out `ticket`, then, in the same task, each run promoted into the slot it frees.
  private func execute(_ ticket: RunTicket, _ handle: RunHandle) async {
    var next: (RunTicket, RunHandle)? = (ticket, handle)
    while let (ticket, handle) = next {
      let promoted = await run(ticket, handle)
      next = promoted.first
      if promoted.count > 1 {
        core.withLock { $0.unstarted += promoted.dropFirst() }
        wake.fire()
      }
    }
  }

  /// Carries out one run; returns the runs promoted into the slot it freed.
  private func run(_ ticket: RunTicket, _ handle: RunHandle) async -> [(RunTicket, RunHandle)] {
    // The claim (advanced next run) must be durable before the worker is invoked.
    do {
      try await writer.waitCommitted(ticket.claimSequence)
    } catch {
      return finish(ticket.token, .notStarted("claim not persisted: \(error)"), abandoned: false)
    }
    var startedAt = clock.now
    var attempt = ticket.attempt
    if let gate = ticket.gate {
      let timer = Task { [clock] in
        do {
          try await clock.sleep(until: gate.deadline, tolerance: nil)
          handle.gate.resolve(.timedOut)
        } catch {}
      }
      let result = await handle.gate.wait()
      timer.cancel()
      if case .stopped(let reason) = result {
        return finish(ticket.token, .stopped(reason), abandoned: false)
      }
      let decided = step { machine, now in
        let (decision, effects) = machine.gateResolved(
          ticket.token, passed: result == .passed, now: now)
        return (decision, effects)
      }
      wake.fire()
      guard case .invoke(let start, let nextAttempt) = decided.value else {
        core.withLock { _ = $0.handles.removeValue(forKey: ticket.token) }
        return decided.tickets
      }
      startedAt = start
      attempt = nextAttempt
      try? await writer.waitCommitted(decided.sequence)
    } else {
      startedAt =
        core.withLock { $0.machine.entries[ticket.taskId]?.run?.startedAt } ?? startedAt
    }
    if let early = handle.end.value {
      return finish(ticket.token, early, abandoned: false)
    }
    let ending = await invoke(ticket, handle, attempt: attempt, startedAt: startedAt)
    // The worker's pause and start closures capture its context, which holds the handle.
    handle.dropWorkerClosures()
    return finish(ticket.token, ending.0, abandoned: ending.1, detail: handle.detail)
  }

  /// Creates the worker, runs it under its budget, and returns how the run ended and whether
  /// the worker had to be abandoned.
  private func invoke(
    _ ticket: RunTicket, _ handle: RunHandle, attempt: Int, startedAt: WallInstant
  ) async -> (RunEnding, Bool) {
    let worker: any Worker
    do {
      guard let factory = factories[ticket.taskId] ?? fallback,
        let made = try factory(ticket.taskId)
      else {
        return (.factoryDeclined, false)
      }
      worker = made
    } catch {
      return (.factoryThrew("\(error)"), false)
    }
    let input: WorkInput
    do {
      input = try WorkInput.deserialize(ticket.input)
    } catch {
      return (.finished(.failure(reason: "stored input cannot be decoded: \(error)")), false)
    }
    let token = ticket.token
    let (started, power) = core.withLock {
      ($0.machine.startConditions(token), $0.machine.power)
    }
    let network = started ?? configuration.network.current
    handle.recordConditions(RunConditions.text(network: network, power: power))
    var context = WorkContext(
      taskId: ticket.taskId, attempt: attempt, input: input, budget: ticket.budget,
      inhibitPolicy: ticket.inhibitPolicy, startedAt: startedAt.date,
      progress: ProgressReporter { [weak self] fraction, message in
        self?.reportProgress(token, fraction: fraction, message: message)
      }, network: network, handle: handle,
      stillPermitted: { [weak self] in
        self?.core.withLock { $0.machine.mayStillStart(token) } ?? false
      })
    context.relaxed = ticket.relaxed
    context.bandwidthCap = ticket.bandwidth
    let workerTask = Task {
      let result = await worker.execute(context)
      handle.end.resolve(.finished(result))
      handle.exit.resolve(true)
    }
    handle.attach(workerTask)
    watchBudget(
      token, until: startedAt.advanced(by: ticket.budget), budget: ticket.budget,
      startedAt: startedAt, handle: handle)
    let ending = await handle.end.wait()
    budgets.forget(token)
    handle.pauseChanged.fire()
    if case .finished = ending { return (ending, false) }
    // Cancelled (expiry or stop): give the worker a grace period to return.
    let graceDeadline = clock.now.advanced(by: configuration.gracePeriod)
    let graceTimer = Task { [clock] in
      do {
        try await clock.sleep(until: graceDeadline, tolerance: nil)
        handle.exit.resolve(false)
      } catch {}
    }
    let returned = await handle.exit.wait()
    graceTimer.cancel()
    if !returned {
      logger.warning(
        "worker ignored cancellation and was abandoned",
        metadata: ["task": "\(ticket.taskId)", "grace": "\(configuration.gracePeriod)"])
      health.workerAbandoned(ticket.taskId, at: clock.now, grace: configuration.gracePeriod)
    }
    return (ending, !returned)
  }

  /// Watches run `token`'s budget (`budget` from `startedAt`) until `deadline`, then
  /// ``budgetPassed(_:budget:startedAt:handle:)``; a run that ended meanwhile is let go (its
  /// end may have forgotten it before this).
  private func watchBudget(
    _ token: RunToken, until deadline: WallInstant, budget: Duration, startedAt: WallInstant,
    handle: RunHandle
  ) {
    budgets.watch(token, until: deadline) { [weak self] in
      self?.budgetPassed(token, budget: budget, startedAt: startedAt, handle: handle)
    }
    if handle.end.value != nil { budgets.forget(token) }
  }

  /// Where run `token` stands once the first deadline of its budget has passed: expired, or
  /// watched again until a later deadline (it was paused for a while), or, paused now, followed
  /// by ``budgetWhilePaused(_:budget:startedAt:handle:)``.
  private func budgetPassed(
    _ token: RunToken, budget: Duration, startedAt: WallInstant, handle: RunHandle
  ) {
    let now = clock.now
    switch core.withLock({ $0.machine.budgetState(token, budget: budget, now: now) }) {
    case .expired, .unknown:
      handle.expire()
    case .runsOut(let deadline):
      watchBudget(token, until: deadline, budget: budget, startedAt: startedAt, handle: handle)
    case .paused:
      Task {
        await self.budgetWhilePaused(token, budget: budget, startedAt: startedAt, handle: handle)
      }
    }
  }

  /// Expires run `token` when its budget runs out, for a run paused when its first deadline
  /// passed: the budget clock stands still while the run is paused (it waits for the thaw), so
  /// a run expires `budget` after its start plus the time it spent paused. Ends with the run.
  private func budgetWhilePaused(
    _ token: RunToken, budget: Duration, startedAt: WallInstant, handle: RunHandle
  ) async {
    do {
      while handle.end.value == nil {
        let now = clock.now
        switch core.withLock({ $0.machine.budgetState(token, budget: budget, now: now) }) {
        case .expired:
          handle.expire()
          return
        case .runsOut(let deadline):
          // Watched with the others again; the run's end forgets it.
          watchBudget(token, until: deadline, budget: budget, startedAt: startedAt, handle: handle)
          return
        case .paused:
          await handle.pauseChanged.wait()
        case .unknown:
          try await clock.sleep(until: startedAt.advanced(by: budget), tolerance: nil)
          handle.expire()
          return
        }
      }
    } catch {}
  }

  /// Records how a run ended; returns the runs promoted into the slot it freed.
  private func finish(
    _ token: RunToken, _ ending: RunEnding, abandoned: Bool, detail: RunDetail = RunDetail()
  ) -> [(RunTicket, RunHandle)] {
    // The slot the run frees is claimed in the same step: the run's outcome and the next claim
    // share one transaction (one fsync), where the dispatch loop's own step committed the claim
    // after it (issue #35: two commits per run). The loop still runs after `wake`, for the
    // next wake-up.
    let ended = step { machine, now in
      var effects = machine.runEnded(
        token, ending: ending, abandoned: abandoned, now: now, detail: detail)
      effects.append(machine.dispatch(now: now).0)
      return ((), effects)
    }
    core.withLock { _ = $0.handles.removeValue(forKey: token) }
    wake.fire()
    return ended.tickets
  }

  private func reportProgress(_ token: RunToken, fraction: Double, message: String?) {
    let event = core.withLock { core in
      core.machine.progress(token, fraction: fraction, message: message, now: clock.now)
    }
    if let event { events.emit([event]) }
  }

  // MARK: - Shutdown

  func shutdown() async {
    step { machine, now in ((), machine.beginShutdown(now: now)) }
    wake.fire()
    await waitForLoop()
    await writer.flush()
    writer.close()
    do {
      try store.close()
    } catch {
      logger.error("closing the store failed", metadata: ["error": "\(error)"])
    }
  }

  /// The handle of the run in flight for `id` when its worker has been invoked.
  func runningHandle(_ id: TaskId) -> RunHandle? {
    core.withLock { core in
      guard let token = core.machine.entries[id]?.run?.token else { return nil }
      return core.handles[token]
    }
  }
}
