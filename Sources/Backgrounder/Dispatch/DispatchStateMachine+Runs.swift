import Foundation

extension DispatchStateMachine {
  // MARK: - Gate

  /// The network gate of a run resolved: `passed` (the requirement is met) or timed out.
  mutating func gateResolved(_ token: RunToken, passed: Bool, now: WallInstant) -> (
    GateDecision, Effects
  ) {
    var effects = Effects()
    guard let id = liveRuns[token], var entry = entries[id], case .gating(token) = entry.phase
    else {
      // Stale (cancelled or replaced while waiting): the run is over.
      if let id = endLiveRun(token) { rearm(id) }
      promoteClaims(now: now, &effects)
      return (.over, effects)
    }
    let requirement = networkNeed(of: entry)
    if passed {
      let unmet = entry.overridden ? [] : unmetDevice(entry.constraints)
      if !unmet.isEmpty {
        // Power went away while waiting for the network: block, no attempt used.
        _ = endLiveRun(token)
        entry.phase = .waiting
        entries[id] = entry
        rearm(id)
        promoteClaims(now: now, &effects)
        return (.over, effects)
      }
      markInvoked(&entry, token: token, now: now, exempt: entry.overridden)
      entry.row.updatedAt = now
      entries[id] = entry
      effects.ops.append(.upsert(entry.row))
      effects.events.append(event(id, .workStarted(attempt: entry.row.attempt), now))
      return (.invoke(startedAt: now, attempt: entry.row.attempt), effects)
    }
    // Timed out: Retry without invoking; deferrals never consume attempts.
    _ = endLiveRun(token)
    entry.phase = .waiting
    entry.row.deferrals += 1
    let delay = backoffDelay(entry.row, after: entry.row.deferrals - 1)
    let satisfiedNow = requirement.isSatisfied(by: network)
    entry.row.nextRun = satisfiedNow ? now : now.advanced(by: delay)
    entry.row.state = satisfiedNow ? .pending : .backoff
    entry.row.blockedOn = satisfiedNow ? [] : [networkPredicate(requirement)]
    entry.row.lastResult = .retry
    entry.row.lastReason =
      "network gate: \(gateWaitPhrase(requirement)) within "
      + HumanText.duration(min(settings.gateLimit, entry.row.budget / 4))
    entry.row.updatedAt = now
    entries[id] = entry
    effects.persist(
      entry.row, run: entry.row.attempt, startedAt: nil, endedAt: now,
      outcome: "deferred", reason: entry.row.lastReason)
    effects.events.append(event(id, .attemptDeferred(reason: .reachabilityTimeout), now))
    effects.events.append(
      event(id, .retryScheduled(nextAttempt: entry.row.attempt, delay: delay), now))
    rearm(id)
    promoteClaims(now: now, &effects)
    return (.over, effects)
  }

  // MARK: - Run end

  /// Records how a run ended — exactly once per token (later calls are ignored).
  mutating func runEnded(
    _ token: RunToken, ending: RunEnding, abandoned: Bool, now: WallInstant,
    detail: RunDetail = RunDetail()
  ) -> Effects {
    var effects = Effects()
    guard let id = endLiveRun(token) else { return effects }
    guard var entry = entries[id], entry.phase.token == token else {
      // The task was cancelled or replaced while this run was in flight.
      if abandoned { noteAbandoned() }
      rearm(id)
      promoteClaims(now: now, &effects)
      return effects
    }
    let attempt = entry.row.attempt
    if abandoned {
      noteAbandoned()
      effects.events.append(event(id, .workerAbandoned(attempt: attempt), now))
    }
    let run = entry.run
    let startedAt = run?.startedAt
    entry.phase = .waiting
    if case .declined = ending {} else { entry.declines = 0 }
    entry.row.updatedAt = now
    entry.row.pausedAt = nil
    entry.row.pauseReason = nil

    func history(_ outcome: String, _ reason: String?) -> StoreOp {
      .appendRun(
        RunRow(
          taskId: id, attempt: attempt, startedAt: startedAt, endedAt: now, outcome: outcome,
          reason: reason))
    }

    switch ending {
    case .notStarted(let why):
      entry.row.state = .pending
      entry.row.nextRun = now.advanced(by: settings.storeRetryDelay)
      entries[id] = entry
      effects.ops.append(.upsert(entry.row))
      effects.events.append(event(id, .libraryError(message: why), now))
    case .conditionsChanged:
      // The worker did not start its work: no attempt used, due again, waits at the gate.
      entry.row.state = .pending
      entry.row.nextRun = now
      entry.row.blockedOn = []
      entry.row.lastRunStartedAt = nil
      entries[id] = entry
      effects.persist(
        entry.row, run: attempt, startedAt: nil, endedAt: now, outcome: "deferred",
        reason: "the network changed between the decision and the start")
      effects.events.append(event(id, .attemptDeferred(reason: .constraintLost), now))
    case .declined(let reason):
      // Not started, for a condition of the worker's own: no attempt used; tried again after
      // the task's backoff, one step further for each decline in a row, counted as deferrals
      // (as the network gate's timeouts are).
      if entry.declines < .max { entry.declines += 1 }
      entry.row.deferrals = Int(entry.declines)
      let delay = backOff(&entry.row, after: entry.row.deferrals - 1, reason: reason, now: now)
      entry.row.lastRunStartedAt = nil
      entries[id] = entry
      effects.persist(
        entry.row, run: attempt, startedAt: nil, endedAt: now, outcome: "deferred",
        reason: reason)
      effects.events.append(event(id, .attemptDeferred(reason: .workerDeclined), now))
      effects.events.append(event(id, .retryScheduled(nextAttempt: attempt, delay: delay), now))
    case .stopped(let reason) where startedAt == nil || reason == .shutdown:
      // Not invoked yet, or stopped by shutdown: resume after the next start, no attempt used.
      entry.row.state = .pending
      entry.row.nextRun = now
      entry.row.blockedOn = []
      if startedAt != nil {
        entry.row.lastResult = .retry
        entry.row.lastReason = "stopped by shutdown"
        entry.row.lastRunEndedAt = now
        effects.ops.append(history("stopped", "shutdown"))
        effects.events.append(event(id, .cancelled(source: .shutdown), now))
      }
      entries[id] = entry
      effects.ops.append(.upsert(entry.row))
    case .stopped(let reason):
      // A constraint was lost (or a stop was requested): Retry without using an attempt; the
      // run is due again and waits at the gate / power block until the constraint returns.
      entry.row.state = .pending
      entry.row.nextRun = now
      entry.row.lastResult = .retry
      entry.row.lastReason =
        reason == .systemSuspending ? reason.phrase : "stopped: \(reason.rawValue)"
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.ops.append(.upsert(entry.row))
      effects.ops.append(history("stopped", reason.rawValue))
      effects.events.append(event(id, .workStopped(attempt: attempt, reason: reason), now))
      effects.events.append(event(id, .attemptDeferred(reason: .constraintLost), now))
    case .factoryDeclined:
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.events.append(event(id, .skipped(reason: .factoryDeclined), now))
      completeCycle(
        id, result: .failure, reason: "factory declined to create a worker",
        historyOutcome: "skipped", startedAt: startedAt, now: now, &effects)
    case .finished(.retry(let reason)):
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.events.append(
        event(
          id, .workCompleted(attempt: attempt, result: .retry, runtime: runtime(startedAt, now)),
          now))
      retryCounted(
        id, reason: reason ?? "worker asked to retry", historyOutcome: "retry",
        startedAt: startedAt,
        now: now, &effects)
    case .finished(let result):
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.events.append(
        event(
          id, .workCompleted(attempt: attempt, result: result, runtime: runtime(startedAt, now)),
          now))
      let (last, reason, outcome): (LastResult, String?, String) =
        if case .failure(let reason) = result {
          (.failure, reason, "failure")
        } else {
          (.success, nil, "success")
        }
      completeCycle(
        id, result: last, reason: reason, historyOutcome: outcome, startedAt: startedAt,
        now: now, &effects)
    case .expired, .expiredOnRequest:
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.events.append(event(id, .attemptFailed(reason: .expired), now))
      retryCounted(
        id,
        reason: ending == .expired
          ? "budget of \(entry.row.budget) expired" : "expired on request by the operator",
        historyOutcome: "expired", startedAt: startedAt, now: now, &effects)
    case .factoryThrew(let message):
      entry.row.lastRunEndedAt = now
      entries[id] = entry
      effects.events.append(event(id, .attemptFailed(reason: .factoryThrew), now))
      retryCounted(
        id, reason: "factory threw: \(message)", historyOutcome: "retry", startedAt: startedAt,
        now: now, &effects)
    }
    // The history row this end appended keeps the run's detail, in the same write.
    for index in effects.ops.indices {
      guard case .appendRun(var record) = effects.ops[index], record.taskId == id else { continue }
      record.conditions = detail.conditions
      record.outputTail = detail.outputTail
      record.stop = detail.stop
      if let relaxed = run?.relaxed, record.startedAt != nil {
        record.reason = record.reason.map { "\($0); \(relaxed)" } ?? relaxed
      }
      effects.ops[index] = .appendRun(record)
    }
    if let bytes = detail.networkBytes { effects.ops.append(.recordNetworkBytes(bytes)) }
    rearm(id)
    promoteClaims(now: now, &effects)
    return effects
  }

  private func runtime(_ startedAt: WallInstant?, _ now: WallInstant) -> Duration {
    startedAt.map { $0.duration(to: now) } ?? .zero
  }

  /// The task's backoff after `step` (an attempt, or its deferrals less one), at most its
  /// interval.
  mutating func backoffDelay(_ row: TaskRow, after step: Int) -> Duration {
    let delay = row.backoff.delay(afterAttempt: step, jitterSample: jitterSample())
    return row.interval.map { min(delay, $0) } ?? delay
  }

  /// Puts `row` in backoff for a retry, its next run ``backoffDelay(_:after:)`` from `now`,
  /// with `reason`; returns the delay.
  mutating func backOff(_ row: inout TaskRow, after step: Int, reason: String, now: WallInstant)
    -> Duration
  {
    let delay = backoffDelay(row, after: step)
    row.state = .backoff
    row.nextRun = now.advanced(by: delay)
    row.blockedOn = []
    row.lastResult = .retry
    row.lastReason = reason
    return delay
  }

  /// A retry that uses an attempt: backoff, or failure once attempts are exhausted.
  mutating func retryCounted(
    _ id: TaskId, reason: String, historyOutcome: String, startedAt: WallInstant?,
    now: WallInstant, _ effects: inout Effects
  ) {
    guard var entry = entries[id] else { return }
    let attempt = entry.row.attempt
    let nextAttempt = attempt + 1
    if nextAttempt >= entry.row.backoff.maxAttempts {
      completeCycle(
        id, result: .failure,
        reason: "\(reason); retries exhausted after \(nextAttempt) attempts",
        historyOutcome: historyOutcome, startedAt: startedAt, now: now, &effects)
      return
    }
    let delay = backOff(&entry.row, after: attempt, reason: reason, now: now)
    entry.row.attempt = nextAttempt
    entry.row.updatedAt = now
    entries[id] = entry
    effects.persist(
      entry.row, run: attempt, startedAt: startedAt, endedAt: now,
      outcome: historyOutcome, reason: reason)
    effects.events.append(event(id, .retryScheduled(nextAttempt: nextAttempt, delay: delay), now))
  }

  /// Ends a cycle: a one-time task is finished (kept in the store for status, dropped from
  /// memory); a periodic task starts its next cycle at now + interval with attempts reset.
  mutating func completeCycle(
    _ id: TaskId, result: LastResult, reason: String?, historyOutcome: String,
    startedAt: WallInstant?, now: WallInstant, _ effects: inout Effects
  ) {
    guard var entry = entries[id] else { return }
    let attempt = entry.row.attempt
    entry.row.lastResult = result
    entry.row.lastReason = reason
    entry.row.updatedAt = now
    entry.row.blockedOn = []
    if result == .success { restartWait(&entry) }
    if entry.row.kind == .periodic, entry.row.interval != nil || entry.row.calendar != nil {
      entry.row.state = .pending
      entry.row.attempt = 0
      entry.row.deferrals = 0
      entry.row.nextRun = nextCycleStart(entry.row, now: now)
      entries[id] = entry
    } else {
      entry.row.state = result == .success ? .succeeded : .failed
      removeEntry(id)
    }
    effects.persist(
      entry.row, run: attempt, startedAt: startedAt, endedAt: now,
      outcome: historyOutcome, reason: reason)
  }

  // MARK: - Resurrection

  /// Loads the persisted active tasks at `start()`. A run left `running` by a dead process
  /// is an interrupted attempt: it is counted and retried by the backoff policy. A run that
  /// died at the network gate, or a claim made ahead of a free worker whose start was not
  /// recorded (`running` with no start time), is due again without using an attempt.
  mutating func load(_ rows: [TaskRow], now: WallInstant) -> Effects {
    var effects = Effects()
    for row in rows {
      var row = row
      var changed = false
      if row.state == .blocked, row.blockedOn.contains(where: { Self.isNetwork($0) }) {
        row.state = .pending
        row.nextRun = now
        row.blockedOn.removeAll { Self.isNetwork($0) }
        changed = true
      }
      if row.state == .running && row.lastRunStartedAt == nil {
        // Claimed ahead and never invoked (or invoked less than one commit before the end).
        row.state = .pending
        changed = true
      }
      let isRegistered = isRegistered(row.id)
      if isRegistered != !row.blockedOn.contains(.workerNotRegistered) {
        row.blockedOn.removeAll { $0 == .workerNotRegistered }
        if !isRegistered { row.blockedOn.append(.workerNotRegistered) }
        changed = true
      }
      if !isRegistered {
        effects.events.append(event(row.id, .skipped(reason: .notRegistered), now))
      }
      if replanCalendar(&row, now: now, loading: true) { changed = true }
      let interrupted = row.state == .running
      // A run paused when the process ended is over: interrupted like any other.
      row.pausedAt = nil
      row.pauseReason = nil
      insertEntry(Entry(row: row))
      armRelax(row.id)
      if interrupted {
        update(row.id) { $0.row.lastRunEndedAt = now }
        effects.events.append(event(row.id, .attemptFailed(reason: .interrupted), now))
        retryCounted(
          row.id, reason: "interrupted: the process ended while the worker was running",
          historyOutcome: "interrupted", startedAt: row.lastRunStartedAt, now: now, &effects)
      } else if changed {
        effects.ops.append(.upsert(row))
      }
      rearm(row.id)
    }
    return effects
  }

  /// What a gate that timed out waited for, in words: "any network not available", "no
  /// working internet (captive portal)", "NetworkManager has not answered", "connectivity not
  /// known yet".
  func gateWaitPhrase(_ requirement: NetworkNeed) -> String {
    if !network.unknownSources.isEmpty {
      let names = network.unknownSources.joined(separator: ", ")
      return "\(names) \(network.unknownSources.count == 1 ? "has" : "have") not answered"
    }
    if !network.isKnown { return "connectivity not known yet" }
    switch networkPredicate(requirement) {
    case .workingInternet(let connectivity):
      return "no working internet (\(connectivity.waitingPhrase))"
    case .networkRequired(let requirement): return "\(requirement.rawValue) network not available"
    case let predicate: return Self.describe([predicate])
    }
  }

  static func isNetwork(_ predicate: PendingPredicate) -> Bool {
    switch predicate {
    case .networkRequired, .workingInternet, .wifiNetwork, .networkInterface, .notRoaming,
      .meteredBudget:
      true
    default: false
    }
  }

  /// What unmet `need` waits for: working internet when routes are there but the
  /// connectivity is known to be broken (captive portal, limited), else the network itself;
  /// once the requirement is met, the allow-list (Wi-Fi network, interface).
  func networkPredicate(_ need: NetworkNeed) -> PendingPredicate {
    if let wait = meteredBudgetPredicate(need) { return wait }
    let requirement = need.requirement
    if requirement.isSatisfied(by: network), let unmet = need.allowList.unmet(by: network) {
      return unmet
    }
    var routesOnly = network
    routesOnly.connectivity = .unknown
    routesOnly.expectsConnectivity = false
    if network.connectivity.blocksNetworkWork && requirement.isSatisfied(by: routesOnly) {
      return .workingInternet(network.connectivity)
    }
    if requirement == .notRoaming, NetworkRequirement.any.isSatisfied(by: network) {
      return .notRoaming(roamingUnknown: network.roamingUnknown)
    }
    return .networkRequired(requirement)
  }
}
