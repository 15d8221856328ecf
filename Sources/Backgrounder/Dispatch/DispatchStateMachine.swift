import DequeModule
import Foundation
import HeapModule

/// Every scheduling decision, as a pure value type: no I/O, no clock, no tasks. The driver
/// (`Backgrounder`) feeds it events with the current time and performs the ``Effects`` it
/// returns. All mutations happen under one lock, which is also the per-task lock of the
/// dispatch contract: a claim re-checks due-ness and advances the next run atomically.
struct DispatchStateMachine: Sendable {
  /// Where a task is in its cycle, with what holds only in that phase: the marks of a waiting
  /// task go with its claim, a run's state with its end. This enum is the one place run state
  /// lives (``Entry`` keeps only what outlasts a run).
  enum Phase: Sendable {
    /// Not claimed: waiting for its next run (or for nothing).
    case idle(Waiting)
    /// Claimed, waiting at the network gate (the worker is not invoked yet).
    case gating(RunToken)
    /// Claimed ahead of a free worker (one-time work whose network requirement was met): the
    /// claim is durable with the others of its batch; the worker is invoked with this ticket
    /// when a slot frees (`forced`: claimed by `runNow`, exempt from constraints).
    case claimed(RunTicket, forced: Bool)
    /// Claimed and invoked (or about to be).
    case running(Run)

    /// Idle, with nothing holding it back or freeing it.
    static var waiting: Phase { .idle(Waiting()) }

    var token: RunToken? {
      switch self {
      case .idle: nil
      case .gating(let token): token
      case .claimed(let ticket, _): ticket.token
      case .running(let run): run.token
      }
    }

    var isIdle: Bool {
      if case .idle = self { true } else { false }
    }
  }

  /// What holds back or frees an idle task until it is claimed.
  struct Waiting: Equatable, Sendable {
    /// `runNow` was called: bypass constraints and backoff once.
    var forced = false
    /// An expedited request demoted to standard by the quota.
    var demoted = false
    /// Due, but held back until its next window opens (``PendingPredicate/waitingForWindow``).
    var windowHeld = false
    /// Held back after the daemon's start or a resume until this time (`start-splay`).
    var splayUntil: WallInstant?
  }

  /// A run that was invoked (or is about to be), until it ends.
  struct Run: Sendable {
    let token: RunToken
    let startedAt: WallInstant
    /// Started by `runNow` or the test driver: it ignores constraint changes.
    let exempt: Bool
    /// The network conditions the run was allowed to start under: the one snapshot its worker
    /// is told about (``WorkContext/network``) and checked against before a start that cannot
    /// be undone (``WorkContext/confirmStart()``). Out of line: it is 80 bytes, and
    /// ``entries`` has up to two buckets per task.
    @OutOfLine var startedUnder: NetworkConditions
    /// It started relaxed (``ConstraintRelaxation``): its history entry says so, in these words.
    let relaxed: String?
    /// The last progress its worker reported.
    var progress: Double?
  }

  struct Entry: Sendable {
    /// Out of line: a task row is about 600 bytes, and ``entries`` has up to two buckets per
    /// task (1.6 MB with 1,000 tasks when it was kept inline).
    @OutOfLine var row: TaskRow
    var phase = Phase.waiting
    /// The test driver declared all constraints met.
    var overridden = false
    var queueVersion: UInt64 = 0
    /// Its constraints relaxed (``ConstraintRelaxation``) after waiting long enough; with what
    /// it waited for, in words. Kept through a run: a relaxed run is judged relaxed.
    var relaxedFor: String?
    /// Starts the worker declined in a row (``WorkContext/declineStart(reason:)``): the backoff
    /// step of the next decline (an invocation resets ``TaskRow/deferrals``, so they cannot
    /// count them).
    var declines: UInt16 = 0

    /// The constraints decisions use now: relaxed once the wait reached the relaxation.
    var constraints: WorkConstraints {
      relaxedFor == nil ? row.constraints : row.constraints.relaxed
    }

    /// What holds it back while idle (`nil` while claimed or running).
    var waiting: Waiting? {
      if case .idle(let waiting) = phase { waiting } else { nil }
    }

    /// Changes what holds it back; nothing while it is claimed or running.
    mutating func updateWaiting(_ body: (inout Waiting) -> Void) {
      guard case .idle(var waiting) = phase else { return }
      body(&waiting)
      phase = .idle(waiting)
    }

    /// `runNow` was called and it was not claimed since.
    var forced: Bool { waiting?.forced ?? false }

    /// The run in flight, once invoked.
    var run: Run? {
      if case .running(let run) = phase { run } else { nil }
    }

    /// The run in flight if it is `token`'s.
    func run(_ token: RunToken) -> Run? {
      guard let run, run.token == token else { return nil }
      return run
    }
  }

  let settings: DispatchSettings
  var entries: [TaskId: Entry] = [:]
  private(set) var network: NetworkConditions
  private(set) var power: PowerConditions
  /// The mount points (`requiredMount`).
  private(set) var mounts = MountConditions.unconfigured
  /// The metered budgets' standings (``networkNeed(of:)``).
  var meteredBudgets = MeteredBudgetStandings()
  /// The destinations checked on the current network (`requiredReachable`).
  private(set) var destinations = DestinationConditions.unconfigured
  private(set) var registered: Set<TaskId>
  /// A fallback factory serves ids that have no factory of their own.
  let acceptsAnyTask: Bool
  private(set) var accepting = true
  /// The system is about to sleep or shut down: nothing starts until it is back.
  var dispatchHeld = false
  /// When the system last went to sleep (`start-splay` spreads what became due since).
  var sleptAt: WallInstant?
  private(set) var abandonedWorkers = 0
  /// Runs in flight (gating or running), including runs of cancelled or replaced tasks that
  /// have not returned yet: they hold a concurrency slot and block a new run of the same id.
  private(set) var liveRuns: [RunToken: TaskId] = [:]
  private var liveTaskIds: [TaskId: Int] = [:]
  /// Claims made ahead of a free worker, in promotion order (expedited first).
  var expeditedClaims: Deque<RunToken> = []
  var standardClaims: Deque<RunToken> = []
  /// Runs holding a concurrency slot (gating or running).
  var runsInSlots: Int { liveRuns.count - expeditedClaims.count - standardClaims.count }
  /// Idle tasks by the time they become eligible (`nextRun − flexWindow`), by priority.
  private var expeditedQueue = Heap<DueKey>()
  private var standardQueue = Heap<DueKey>()
  /// Idle tasks by the time worth waking up for (`nextRun`): a flex window lets a task join
  /// a dispatch early but never wakes the loop early.
  private var wakeQueue = Heap<DueKey>()
  private var queueVersion: UInt64 = 0
  private var expeditedStarts: Deque<WallInstant> = []
  private var nextToken: UInt64 = 0
  private var rng: SplitMix64
  /// Runs to stop when their window closes (`window-end = "stop"`), by when.
  var windowStops: [RunToken: WallInstant] = [:]
  /// The pauses of runs in flight (`on-condition-lost = "pause"`), by run.
  var runPauses: [RunToken: RunPause] = [:]
  /// When the constraints of a waiting task relax (``ConstraintRelaxation``), by task.
  var relaxDeadlines: [TaskId: WallInstant] = [:]
  /// The user's idle state (`requiresIdle`).
  var userIdle = UserIdleConditions.unconfigured
  /// The time idle requirements were last judged at (``unmetDevice(_:)`` has no clock).
  var idleJudgedAt = WallInstant(nanosecondsSince1970: .min)
  /// The `requiresIdle` of every task that has one (the times worth waking up for while the
  /// user is idle); an entry of a task gone or changed since is dropped when met.
  var idleRequirements: [TaskId: Duration] = [:]

  init(
    settings: DispatchSettings, registered: Set<TaskId>, acceptsAnyTask: Bool = false,
    network: NetworkConditions, power: PowerConditions, seed: UInt64,
    mounts: MountConditions = .unconfigured
  ) {
    self.mounts = mounts
    self.settings = settings
    self.registered = registered
    self.acceptsAnyTask = acceptsAnyTask
    self.network = network
    self.power = power
    self.rng = SplitMix64(state: seed)
  }

  // MARK: - Requests

  /// Records a new request (already validated). `.keep` leaves active work alone.
  mutating func schedule(_ row: TaskRow, policy: ExistingWorkPolicy, now: WallInstant)
    -> (ScheduleOutcome, Effects)
  {
    var effects = Effects()
    guard accepting else { return (.rejected(.shutDown), effects) }
    guard isRegistered(row.id) else { return (.rejected(.notRegistered(row.id)), effects) }
    let existing = entries[row.id]
    if existing != nil && policy == .keep { return (.keptExisting, effects) }
    if let existing, policy == .update, existing.row.kind == row.kind {
      return (.scheduled, update(existing, to: row, now: now))
    }
    var row = row
    if let existing {
      row.lastResult = existing.row.lastResult
      row.lastReason = existing.row.lastReason
      row.lastRunStartedAt = existing.row.lastRunStartedAt
      row.lastRunEndedAt = existing.row.lastRunEndedAt
      if case .claimed(let ticket, _) = existing.phase {
        dropClaim(ticket.token, &effects)
      } else if let token = existing.phase.token {
        effects.stops.append((token, .cancelled))
        effects.events.append(event(row.id, .cancelled(source: .replaced), now))
      }
      effects.events.append(event(row.id, .scheduleReplaced, now))
    } else {
      effects.events.append(event(row.id, .scheduled, now))
    }
    insertEntry(Entry(row: row))
    effects.ops.append(.upsert(row))
    rearm(row.id)
    return (.scheduled, effects)
  }

  /// Takes `row`'s definition into `existing` and keeps its scheduling state, except that a
  /// changed interval moves the next run to the start of the current cycle plus the new
  /// interval (a retry waiting in backoff keeps its time); a run in flight finishes under the
  /// old definition.
  private mutating func update(_ existing: Entry, to row: TaskRow, now: WallInstant) -> Effects {
    var updated = existing.row
    updated.constraints = row.constraints
    if let old = existing.row.interval, let new = row.interval, old != new,
      existing.row.state != .backoff, let next = existing.row.nextRun
    {
      // A new period counts from the start of the current cycle (a past time is due now).
      updated.nextRun = next.advanced(by: new - old)
    }
    updated.interval = row.interval
    updated.flexWindow = row.flexWindow
    updated.initialDelay = row.initialDelay
    updated.hint = row.hint
    updated.budget = row.budget
    updated.backoff = row.backoff
    updated.inhibitPolicy = row.inhibitPolicy
    updated.input = row.input
    updated.ephemeral = row.ephemeral
    updated.updatedAt = now
    noteIdleRequirement(updated)
    updateCalendar(&updated, to: row, now: now)
    entries[row.id]?.row = updated
    armRelax(row.id)
    rearm(row.id)
    var effects = Effects()
    effects.ops.append(.upsert(updated))
    effects.events.append(event(row.id, .scheduleReplaced, now))
    return effects
  }

  /// Removes a task; a running worker is stopped.
  mutating func cancel(_ id: TaskId, now: WallInstant) -> (CancelOutcome, Effects) {
    var effects = Effects()
    guard let entry = entries.removeValue(forKey: id) else { return (.noSuchTask, effects) }
    var invoked = entry.phase.token != nil
    if case .claimed(let ticket, _) = entry.phase {
      dropClaim(ticket.token, &effects)
      invoked = false
    } else if let token = entry.phase.token {
      effects.stops.append((token, .cancelled))
    }
    effects.ops.append(.delete(id))
    effects.events.append(event(id, .cancelled(source: .user), now))
    return (.cancelled(pendingCleared: !invoked), effects)
  }

  /// Removes every task.
  mutating func cancelAll(now: WallInstant) -> (Int, Effects) {
    var effects = Effects()
    let ids = entries.keys.sorted()
    for id in ids {
      let (_, more) = cancel(id, now: now)
      effects.stops += more.stops
      effects.events += more.events
    }
    effects.ops = [.deleteAll]
    return (ids.count, effects)
  }

  /// Marks a task to run at once, bypassing constraints and backoff. Repeated calls before
  /// the dispatch coalesce; a call while a run is in flight starts nothing.
  mutating func runNow(_ id: TaskId) -> RunNowOutcome {
    guard accepting else { return .notRunning }
    guard entries[id] != nil else { return .noSuchTask }
    if liveTaskIds[id] != nil { return .alreadyRunning }
    entries[id]?.updateWaiting { $0.forced = true }
    rearm(id)
    return .triggered
  }

  // MARK: - Dispatch

  /// Claims every due task that fits in the concurrency limit (expedited first), then up to
  /// `settings.claimAhead` more one-time tasks ahead of free workers, so that one transaction
  /// (one fsync) carries many claims; returns the runs to start plus the next instant worth
  /// waking up for.
  mutating func dispatch(now: WallInstant) -> (Effects, WallInstant?) {
    var effects = Effects()
    guard accepting else { return (effects, nil) }
    judgeIdle(now: now, &effects)
    stopRunsPastTheirWindow(now: now, &effects)
    stopRunsPausedTooLong(now: now, &effects)
    if hasRunsPausedForTheirWindow { resumePausedRuns(now: now, &effects) }
    guard !dispatchHeld else { return (effects, nil) }
    relaxWaitedOut(now: now, &effects)
    promoteClaims(now: now, &effects)
    while runsInSlots < settings.concurrencyLimit, let id = popDue(now: now, &effects) {
      claim(id, now: now, &effects)
    }
    while expeditedClaims.count + standardClaims.count < settings.claimAhead,
      let id = popDue(now: now, &effects)
    {
      guard canClaimAhead(id) else {
        // It waits for the next free slot, at the head of its queue.
        rearm(id)
        break
      }
      claimAhead(id, now: now, &effects)
    }
    return (effects, nextWake(now: now))
  }

  private mutating func popDue(now: WallInstant, _ effects: inout Effects) -> TaskId? {
    while let key = expeditedQueue.min, key.time <= now {
      expeditedQueue.removeMin()
      guard isCurrent(key) else { continue }
      noteDue(key.id, now: now, &effects)
      if !quotaAvailable(now: now) {
        if case .expedited(.drop) = entries[key.id]?.row.hint {
          drop(key.id, now: now, &effects)
        } else {
          entries[key.id]?.updateWaiting { $0.demoted = true }
          rearm(key.id)
        }
        continue
      }
      if blockIfPowerUnmet(key.id, now: now, &effects) { continue }
      if holdForWindow(key.id, now: now) { continue }
      return key.id
    }
    while let key = standardQueue.min, key.time <= now {
      standardQueue.removeMin()
      guard isCurrent(key) else { continue }
      noteDue(key.id, now: now, &effects)
      if blockIfPowerUnmet(key.id, now: now, &effects) { continue }
      if holdForWindow(key.id, now: now) { continue }
      return key.id
    }
    return nil
  }

  private mutating func nextWake(now: WallInstant) -> WallInstant? {
    while let key = wakeQueue.min, !isCurrent(key) { wakeQueue.removeMin() }
    let windowStop = [
      windowStops.values.min(), nextPauseExpiry, relaxDeadlines.values.min(),
      nextIdleThreshold(after: now), nextOpeningForPausedRuns(after: now),
    ]
    .compactMap { $0 }.min()
    guard let soonest = wakeQueue.min?.time else { return windowStop }
    // Due work waiting for a slot is woken by the run that frees one.
    if soonest <= now { return windowStop }
    return min(soonest, windowStop ?? soonest)
  }

  private func isCurrent(_ key: DueKey) -> Bool {
    guard let entry = entries[key.id] else { return false }
    return entry.queueVersion == key.version && entry.phase.isIdle
      && isRegistered(key.id) && liveTaskIds[key.id] == nil && !isPowerBlocked(entry)
  }

  private func isPowerBlocked(_ entry: Entry) -> Bool {
    entry.row.state == .blocked && entry.phase.isIdle
      && entry.row.blockedOn.contains { Self.isDeviceCondition($0) }
  }

  private mutating func quotaAvailable(now: WallInstant) -> Bool {
    guard let quota = settings.expeditedQuota else { return true }
    let horizon = now.advanced(by: .zero - quota.window)
    while let first = expeditedStarts.first, first <= horizon { expeditedStarts.removeFirst() }
    return expeditedStarts.count < quota.runs
  }

  /// Puts an idle task (back) in its queue at its eligible time.
  mutating func rearm(_ id: TaskId) {
    guard var entry = entries[id], let waiting = entry.waiting, isRegistered(id),
      !isPowerBlocked(entry), let nextRun = entry.row.nextRun
    else { return }
    queueVersion &+= 1
    entry.queueVersion = queueVersion
    let splay = waiting.forced ? nil : waiting.splayUntil
    let wakeTime =
      waiting.forced ? WallInstant(nanosecondsSince1970: .min) : max(nextRun, splay ?? nextRun)
    let eligible = max(
      wakeTime.advanced(by: .zero - (waiting.forced ? .zero : entry.row.flexWindow ?? .zero)),
      splay ?? .init(nanosecondsSince1970: .min))
    let key = DueKey(time: eligible, id: id, version: queueVersion)
    if entry.row.hint.isExpedited && !waiting.demoted {
      expeditedQueue.insert(key)
    } else {
      standardQueue.insert(key)
    }
    wakeQueue.insert(DueKey(time: wakeTime, id: id, version: queueVersion))
    entries[id] = entry
  }

  /// Blocks a due task whose power constraints are unmet (no attempt is used). Returns
  /// whether it is blocked.
  private mutating func blockIfPowerUnmet(
    _ id: TaskId, now: WallInstant, _ effects: inout Effects
  ) -> Bool {
    guard var entry = entries[id], !entry.forced, !entry.overridden else { return false }
    let unmet = unmetDevice(entry.constraints)
    if unmet.isEmpty { return false }
    if entry.row.state != .blocked || entry.row.blockedOn != unmet {
      entry.row.state = .blocked
      entry.row.blockedOn = unmet
      entry.row.updatedAt = now
      let reason: DeferralReason =
        unmet.contains(where: Self.isUserIdle) && unmet.count == 1
        ? .userIdleNotMet
        : unmet.contains(.requiresCharging)
          ? .chargingNotMet
          : unmet.contains(.requiresBatteryNotLow)
            ? .batteryNotLowNotMet : Self.deferral(unmet)
      effects.persist(
        entry.row, run: entry.row.attempt, startedAt: nil, endedAt: now,
        outcome: "blocked", reason: Self.describe(unmet))
      effects.events.append(event(id, .attemptDeferred(reason: reason), now))
    }
    entries[id] = entry
    return true
  }

  private mutating func claim(_ id: TaskId, now: WallInstant, _ effects: inout Effects) {
    guard var entry = entries[id], let waiting = entry.waiting else { return }
    let token = newToken()
    let exempt = waiting.forced || entry.overridden
    let requirement = networkNeed(of: entry)
    let needsGate = !exempt && !requirement.isSatisfied(by: network)
    if entry.row.hint.isExpedited && !waiting.demoted { expeditedStarts.append(now) }
    if entry.row.kind == .periodic, let interval = entry.row.interval {
      entry.row.nextRun = now.advanced(by: interval)
    }
    claimCalendarElapse(&entry, now: now)
    if !exempt { armWindowStop(token, entry.row.constraints, now: now) }
    entry.row.updatedAt = now
    var gate: GateSpec?
    if needsGate {
      entry.phase = .gating(token)
      entry.row.state = .blocked
      entry.row.blockedOn = [networkPredicate(requirement)]
      let wait = min(settings.gateLimit, entry.row.budget / 4)
      gate = GateSpec(requirement: requirement, deadline: now.advanced(by: wait))
    } else {
      markInvoked(&entry, token: token, now: now, exempt: exempt)
      effects.events.append(event(id, .workStarted(attempt: entry.row.attempt), now))
    }
    effects.ops.append(.upsert(entry.row))
    entries[id] = entry
    addLiveRun(token, id)
    effects.tickets.append(
      RunTicket(
        token: token, taskId: id, attempt: entry.row.attempt, input: entry.row.input,
        budget: entry.row.budget, inhibitPolicy: entry.row.inhibitPolicy, gate: gate,
        relaxed: entry.relaxedFor != nil, bandwidth: entry.row.constraints.bandwidth))
  }

  func markInvoked(_ entry: inout Entry, token: RunToken, now: WallInstant, exempt: Bool) {
    entry.phase = .running(
      Run(
        token: token, startedAt: now, exempt: exempt, startedUnder: network,
        relaxed: relaxedRunPhrase(entry, now: now)))
    entry.row.state = .running
    entry.row.blockedOn = []
    entry.row.deferrals = 0
    entry.row.lastRunStartedAt = now
  }

  /// The conditions the run `token` was started under, while it runs.
  func startConditions(_ token: RunToken) -> NetworkConditions? {
    guard let id = liveRuns[token] else { return nil }
    return entries[id]?.run(token)?.startedUnder
  }

  /// Whether the run `token` may still start its irreversible part: it runs, and the network
  /// conditions are still the ones it was started under (an exempt run always may).
  func mayStillStart(_ token: RunToken) -> Bool {
    guard let id = liveRuns[token], let run = entries[id]?.run(token) else { return false }
    return run.exempt || run.startedUnder == network
  }

  private mutating func drop(_ id: TaskId, now: WallInstant, _ effects: inout Effects) {
    guard var entry = entries.removeValue(forKey: id) else { return }
    entry.row.state = .failed
    entry.row.lastResult = .failure
    entry.row.lastReason = "dropped: expedited quota exhausted"
    entry.row.updatedAt = now
    effects.ops.append(.upsert(entry.row))
    effects.events.append(event(id, .skipped(reason: .quotaExhausted), now))
  }

  // MARK: - Observation

  /// The active tasks as `scheduled()` reports them.
  func snapshot(now: WallInstant) -> [ScheduledTask] {
    entries.values.map { scheduledTask($0, now: now) }.sorted { $0.taskId < $1.taskId }
  }

  /// One task as `scheduled()` reports it: its state, what it waits for and when it may run.
  private func scheduledTask(_ entry: Entry, now: WallInstant) -> ScheduledTask {
    let row = entry.row
    var predicates: [PendingPredicate] = []
    let state: TaskState
    let hint: Date?
    var progress: Double?
    switch entry.phase {
    case .running(let run):
      state = .running
      hint = nil
      progress = run.progress
    case .claimed:
      // Waiting for a free worker.
      state = .pending
      hint = now.date
    case .gating:
      state = .blocked
      hint = nil
      predicates.append(networkPredicate(networkNeed(of: entry)))
    case .idle(let waiting):
      if !isRegistered(row.id) { predicates.append(.workerNotRegistered) }
      let requirement = networkNeed(of: entry)
      if !entry.overridden && !requirement.isSatisfied(by: network) {
        predicates.append(networkPredicate(requirement))
      }
      if !entry.overridden { predicates += unmetDevice(entry.constraints) }
      let windowOpens = windowOpening(entry, waiting, now: now)
      if waiting.forced {
        state = isPowerBlocked(entry) ? .blocked : .pending
      } else if isPowerBlocked(entry) || !isRegistered(row.id) {
        state = .blocked
      } else if let windowOpens {
        state = row.state == .backoff ? .backoff : .pending
        predicates.append(.waitingForWindow(opens: windowOpens.date))
      } else if let next = row.nextRun, next > now {
        state = row.state == .backoff ? .backoff : .pending
        predicates.append(
          row.state == .backoff
            ? .waitingForBackoff(until: next.date) : .waitingForEarliestBeginDate(at: next.date))
      } else {
        state = .pending
      }
      hint = waiting.forced ? now.date : (windowOpens ?? row.nextRun.map { max($0, now) })?.date
    }
    return ScheduledTask(
      taskId: row.id, kind: row.kind, state: state, nextRunHint: hint, attempt: row.attempt,
      deferrals: row.deferrals, ephemeral: row.ephemeral, pendingPredicates: predicates,
      lastResult: row.lastResult, lastReason: row.lastReason, progress: progress)
  }

  /// The token of the run in flight for `id`, if any.
  func liveToken(for id: TaskId) -> RunToken? {
    entries[id]?.phase.token
  }

  /// Records progress of a running worker; returns the event to publish.
  mutating func progress(
    _ token: RunToken, fraction: Double, message: String?, now: WallInstant
  ) -> MonitorEvent? {
    guard let id = liveRuns[token], var entry = entries[id], var run = entry.run(token) else {
      return nil
    }
    run.progress = fraction
    entry.phase = .running(run)
    entries[id] = entry
    return event(id, .progress(fraction: fraction, message: message), now)
  }

  // MARK: - Helpers shared by the extensions

  mutating func update(_ id: TaskId, _ body: (inout Entry) -> Void) {
    guard var entry = entries[id] else { return }
    body(&entry)
    entries[id] = entry
  }

  mutating func removeEntry(_ id: TaskId) {
    entries.removeValue(forKey: id)
  }

  mutating func insertEntry(_ entry: Entry) {
    var entry = entry
    noteIdleRequirement(entry.row)
    queueVersion &+= 1
    entry.queueVersion = queueVersion
    entries[entry.row.id] = entry
  }

  mutating func addLiveRun(_ token: RunToken, _ id: TaskId) {
    liveRuns[token] = id
    liveTaskIds[id, default: 0] += 1
  }

  mutating func newToken() -> RunToken {
    nextToken += 1
    return RunToken(value: nextToken)
  }

  mutating func noteExpeditedStart(_ now: WallInstant) {
    expeditedStarts.append(now)
  }

  mutating func endLiveRun(_ token: RunToken) -> TaskId? {
    windowStops[token] = nil
    runPauses[token] = nil
    guard let id = liveRuns.removeValue(forKey: token) else { return nil }
    if let count = liveTaskIds[id], count > 1 {
      liveTaskIds[id] = count - 1
    } else {
      liveTaskIds.removeValue(forKey: id)
    }
    return id
  }

  mutating func stopAccepting() {
    accepting = false
  }

  mutating func noteAbandoned() {
    abandonedWorkers += 1
  }

  mutating func setNetwork(_ conditions: NetworkConditions) {
    network = conditions
  }

  mutating func setPower(_ conditions: PowerConditions) {
    power = conditions
  }

  mutating func setMounts(_ conditions: MountConditions) {
    mounts = conditions
  }

  mutating func setDestinations(_ conditions: DestinationConditions) {
    destinations = conditions
  }

  mutating func jitterSample() -> Double {
    rng.nextUnit()
  }

  func event(_ id: TaskId?, _ kind: MonitorEvent.Kind, _ now: WallInstant) -> MonitorEvent {
    MonitorEvent(taskId: id, time: now.date, kind: kind)
  }

  static func describe(_ predicates: [PendingPredicate]) -> String {
    predicates.map { predicate in
      switch predicate {
      case .networkRequired(let requirement): "network \(requirement.rawValue) not available"
      case .workingInternet(let connectivity):
        "no working internet (\(connectivity.waitingPhrase))"
      case .requiresCharging: "requires charging"
      case .requiresBatteryNotLow: "requires battery not low"
      case .workerNotRegistered: "no worker registered"
      case .wifiNetwork(let allowed, let current):
        "Wi-Fi network \(allowed.joined(separator: ", ")) (now: \(current ?? "not on Wi-Fi"))"
      case .networkInterface(let allowed, let current):
        "interface \(allowed.joined(separator: ", ")) (now: \(current ?? "none"))"
      case .mounted(let path): "\(path) to be mounted"
      case .notRoaming(let unknown): NetworkRequirement.notRoamingPhrase(unknown)
      case .reachable(let destination, let failure):
        "\(destination) to be reachable (\(failure?.phrase ?? "not checked yet"))"
      case .meteredBudget(let wait): wait.phrase { ISO8601.string($0) }
      case .userIdle(let required, let idleSince, let unknown):
        "the user idle for \(HumanText.duration(required)) ("
          + (unknown.map { "not known: \($0)" }
            ?? idleSince.map { "idle since \(ISO8601.string($0))" } ?? "the user is active")
          + ")"
      case .waitingForBackoff(let until): "waiting for backoff until \(ISO8601.string(until))"
      case .waitingForEarliestBeginDate(let at): "earliest begin \(ISO8601.string(at))"
      case .waitingForWindow(let opens): "waiting for window opening \(ISO8601.string(opens))"
      }
    }.joined(separator: "; ")
  }
}

extension DispatchStateMachine {
  /// Whether a worker can be made for `id`.
  func isRegistered(_ id: TaskId) -> Bool {
    acceptsAnyTask || registered.contains(id)
  }
}
