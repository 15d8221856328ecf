/// The pauses of one run in flight (`on-condition-lost = "pause"`).
struct RunPause: Hashable, Sendable {
  /// The lost condition it is frozen for; nil while it runs.
  var reason: StopReason?
  /// When the current pause began.
  var since: WallInstant?
  /// When the current pause reaches its `pause-max` and the run is stopped.
  var until: WallInstant?
  /// The run is being stopped at its `pause-max`: it is not thawed any more.
  var stopping = false
  /// The time spent in the pauses that ended: the budget clock does not count it.
  var total: Duration = .zero

  var isPaused: Bool { since != nil }
}

/// Where a run's budget stands (``DispatchStateMachine/budgetState(_:budget:now:)``).
enum BudgetState: Hashable, Sendable {
  /// It runs out at this instant, unless the run is paused before.
  case runsOut(WallInstant)
  /// It ran out.
  case expired
  /// The run is paused: the budget clock stands still until it is thawed.
  case paused
  /// The run is not running (any more): the budget counts from its start, as if never paused.
  case unknown
}

extension DispatchStateMachine {
  /// A running run `token` of `id` lost a condition (`reason`, a known loss): frozen when the
  /// task pauses (``ConditionLossPolicy/pause(max:)``) — no attempt used, its history records
  /// the pause — else stopped as always. A paused run stays paused for a further loss.
  mutating func conditionLost(
    _ token: RunToken, of id: TaskId, reason: StopReason, now: WallInstant,
    _ effects: inout Effects
  ) {
    guard let entry = entries[id], let startedAt = entry.run(token)?.startedAt,
      let pauseMax = entry.row.constraints.pauseMax(for: reason)
    else {
      effects.stops.append((token, reason))
      return
    }
    var pause = runPauses[token] ?? RunPause()
    guard !pause.isPaused else {
      // Paused already: a window that closes meanwhile must open again before the thaw.
      if reason == .windowClosed { runPauses[token]?.reason = reason }
      return
    }
    pause.reason = reason
    pause.since = now
    pause.until = now.advanced(by: pauseMax)
    runPauses[token] = pause
    update(id) { entry in
      entry.row.pausedAt = now
      entry.row.pauseReason = reason
      entry.row.updatedAt = now
      effects.ops.append(.upsert(entry.row))
      effects.ops.append(
        .appendRun(
          RunRow(
            taskId: id, attempt: entry.row.attempt, startedAt: startedAt, endedAt: now,
            outcome: "paused", reason: reason.lostCondition)))
    }
    effects.pauses.append((token, reason))
    effects.events.append(event(id, .workPaused(attempt: entry.row.attempt, reason: reason), now))
  }

  /// Thaws every paused run whose conditions all hold again (unknown is not permission: a
  /// condition that became unknown keeps it paused).
  mutating func resumePausedRuns(now: WallInstant, _ effects: inout Effects) {
    for token in runPauses.keys.sorted(by: { $0.value < $1.value }) {
      guard var pause = runPauses[token], let since = pause.since, !pause.stopping,
        let id = liveRuns[token], let entry = entries[id],
        let run = entry.run(token),
        networkNeed(of: entry).isSatisfied(by: network),
        unmetWhileRunning(entry.constraints).isEmpty,
        pause.reason != .windowClosed
          || entry.row.constraints.windows.allowStart(at: now, in: settings.timeZone)
      else { continue }
      let paused = since.duration(to: now)
      pause.total += paused
      pause.reason = nil
      pause.since = nil
      pause.until = nil
      runPauses[token] = pause
      update(id) { entry in
        entry.row.pausedAt = nil
        entry.row.pauseReason = nil
        entry.row.updatedAt = now
        effects.ops.append(.upsert(entry.row))
        effects.ops.append(
          .appendRun(
            RunRow(
              taskId: id, attempt: entry.row.attempt, startedAt: run.startedAt, endedAt: now,
              outcome: "resumed", reason: "after \(HumanText.duration(paused)) paused")))
      }
      effects.resumes.append(token)
      effects.events.append(
        event(id, .workResumed(attempt: entry.row.attempt, paused: paused), now))
      // Thawed in a window that closes later: stopped (or paused) again then.
      if !run.exempt { armWindowStop(token, entry.row.constraints, now: now) }
    }
  }

  /// Stops the runs paused for their whole `pause-max`, for the condition they lost.
  mutating func stopRunsPausedTooLong(now: WallInstant, _ effects: inout Effects) {
    for (token, pause) in runPauses {
      guard let until = pause.until, until <= now, let reason = pause.reason, !pause.stopping
      else { continue }
      runPauses[token]?.stopping = true
      runPauses[token]?.until = nil
      effects.stops.append((token, reason))
    }
  }

  /// When the next paused run reaches its `pause-max`.
  var nextPauseExpiry: WallInstant? {
    runPauses.values.compactMap(\.until).min()
  }

  /// The lost condition the run `token` is paused for, nil while it is not paused (what its
  /// worker should be brought to).
  func pauseReason(_ token: RunToken) -> StopReason? {
    runPauses[token]?.reason
  }

  /// Where the budget (`budget` long) of run `token` stands at `now`: its clock stands still
  /// while the run is paused, so it runs out `budget` plus the time paused after the start.
  func budgetState(_ token: RunToken, budget: Duration, now: WallInstant) -> BudgetState {
    guard let id = liveRuns[token], let startedAt = entries[id]?.run(token)?.startedAt else {
      return .unknown
    }
    let pause = runPauses[token] ?? RunPause()
    if pause.isPaused { return .paused }
    let runsOut = startedAt.advanced(by: budget + pause.total)
    return runsOut <= now ? .expired : .runsOut(runsOut)
  }
}
