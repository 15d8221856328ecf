extension DispatchStateMachine {
  // MARK: - Relaxing constraints (`relax-after`)

  /// A due task of `id` was taken from its queue: its wait for conditions starts at its due
  /// time, unless it is already waiting (the wait restarts only after a success).
  mutating func noteDue(_ id: TaskId, now: WallInstant, _ effects: inout Effects) {
    guard let entry = entries[id], entry.row.constraints.relaxation != nil,
      entry.row.waitingSince == nil
    else { return }
    update(id) { entry in
      entry.row.waitingSince = min(entry.row.nextRun ?? now, now)
      effects.ops.append(.upsert(entry.row))
    }
    armRelax(id)
  }

  /// Arms the relaxation of a waiting task (at `waitingSince + after`), or disarms it.
  mutating func armRelax(_ id: TaskId) {
    guard let entry = entries[id], entry.relaxedFor == nil,
      let relaxation = entry.row.constraints.relaxation, let since = entry.row.waitingSince
    else {
      relaxDeadlines[id] = nil
      return
    }
    relaxDeadlines[id] = since.advanced(by: relaxation.after)
  }

  /// Relaxes the constraints of every task whose wait reached its relaxation by `now`; an idle
  /// one waiting for a condition that relaxed is due again at once.
  mutating func relaxWaitedOut(now: WallInstant, _ effects: inout Effects) {
    guard let soonest = relaxDeadlines.values.min(), soonest <= now else { return }
    for (id, deadline) in relaxDeadlines where deadline <= now {
      relaxDeadlines[id] = nil
      // Not a deadline of a task cancelled or replaced since.
      guard var entry = entries[id], entry.relaxedFor == nil,
        let relaxation = entry.row.constraints.relaxation, let since = entry.row.waitingSince,
        since.advanced(by: relaxation.after) <= now
      else { continue }
      let strict = entry.row.constraints
      var unmet = unmetDevice(strict)
      if !strict.networkNeed.isSatisfied(by: network) {
        unmet.insert(networkPredicate(strict.networkNeed), at: 0)
      }
      entry.relaxedFor = strict.relaxedWaitPhrase(unmet: unmet)
      if entry.phase.isIdle {
        entry.row.blockedOn.removeAll { Self.isNetwork($0) || Self.isDeviceCondition($0) }
        if entry.row.state == .blocked
          || (entry.row.state == .backoff && entry.row.deferrals > 0)
        {
          entry.row.state = .pending
          if let next = entry.row.nextRun, next > now { entry.row.nextRun = now }
        }
        entry.row.updatedAt = now
        effects.ops.append(.upsert(entry.row))
      }
      entries[id] = entry
      rearm(id)
    }
  }

  /// The wait for conditions restarts (after a successful run): the full constraints apply
  /// again.
  mutating func restartWait(_ entry: inout Entry) {
    entry.row.waitingSince = nil
    entry.relaxedFor = nil
    relaxDeadlines[entry.row.id] = nil
  }

  /// What the history of a run starting relaxed says ("ran relaxed after waiting 3 d 2 h for
  /// an unmetered network"), or nil for a run under its full constraints.
  func relaxedRunPhrase(_ entry: Entry, now: WallInstant) -> String? {
    guard let waitedFor = entry.relaxedFor, let since = entry.row.waitingSince else { return nil }
    return
      "ran relaxed after waiting \(HumanText.duration(since.duration(to: now))) for \(waitedFor)"
  }

  /// When the constraints of `id` relax, while it waits and they have not yet.
  func relaxesAt(_ id: TaskId) -> WallInstant? {
    relaxDeadlines[id]
  }
}
