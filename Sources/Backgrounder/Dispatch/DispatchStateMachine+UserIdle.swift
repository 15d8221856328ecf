extension DispatchStateMachine {
  // MARK: - The user's idleness (`requiresIdle`)

  /// The user's idle state changed (logind's idle hint): release work the user has been idle
  /// long enough for, and pause or stop running work whose user came back
  /// (``UserReturnPolicy``). An idle state that became unknown stops nothing.
  mutating func userIdleChanged(_ conditions: UserIdleConditions, now: WallInstant) -> Effects {
    userIdle = conditions
    idleJudgedAt = now
    return deviceConditionsChanged(now: now)
  }

  /// Judges idle requirements at `now`: while the user is idle, a task's requirement is met
  /// once `idleSince + requiresIdle` has passed (the timer ``nextIdleThreshold(after:)`` set),
  /// and what it releases (a waiting task, a paused run) is released now.
  mutating func judgeIdle(now: WallInstant, _ effects: inout Effects) {
    guard let since = userIdle.idleSince.map(WallInstant.init), !idleRequirements.isEmpty else {
      return
    }
    let before = idleJudgedAt
    idleJudgedAt = now
    idleRequirements = idleRequirements.filter { id, required in
      entries[id]?.row.constraints.requiresIdle == required
    }
    let crossed = idleRequirements.values.contains { required in
      let threshold = since.advanced(by: required)
      return before < threshold && threshold <= now
    }
    if crossed { effects.append(deviceConditionsChanged(now: now)) }
  }

  /// The next time after `now` an idle requirement is met, while the user is idle.
  func nextIdleThreshold(after now: WallInstant) -> WallInstant? {
    guard let since = userIdle.idleSince.map(WallInstant.init) else { return nil }
    return idleRequirements.values.lazy.map { since.advanced(by: $0) }.filter { $0 > now }.min()
  }

  /// Keeps `row`'s idle requirement (or forgets it).
  mutating func noteIdleRequirement(_ row: TaskRow) {
    idleRequirements[row.id] = row.constraints.requiresIdle
  }

  /// Whether `predicate` is the user-idle one.
  static func isUserIdle(_ predicate: PendingPredicate) -> Bool {
    if case .userIdle = predicate { return true }
    return false
  }
}

extension WorkConstraints {
  /// How long a run that lost the condition `reason` stays paused, or nil when it is stopped:
  /// the user's return follows ``onUserReturn`` (paused for the task's `pause-max`, else
  /// ``ConditionLossPolicy/defaultPauseMax``), every other loss ``onConditionLost``.
  func pauseMax(for reason: StopReason) -> Duration? {
    guard reason == .userReturned else { return onConditionLost.pauseMax }
    guard onUserReturn == .pause else { return nil }
    return onConditionLost.pauseMax ?? ConditionLossPolicy.defaultPauseMax
  }
}
