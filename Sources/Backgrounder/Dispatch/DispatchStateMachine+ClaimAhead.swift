extension DispatchStateMachine {
  // MARK: - Claims ahead of free workers

  /// Whether `id` may be claimed before a worker is free: one-time work that needs no
  /// network gate now. A periodic claim is always made into a free slot, so that its start is
  /// durable before its worker runs and an interrupted run is a counted attempt of its cycle.
  func canClaimAhead(_ id: TaskId) -> Bool {
    guard let entry = entries[id], entry.row.kind == .oneTime else { return false }
    return entry.forced || entry.overridden
      || networkNeed(of: entry).isSatisfied(by: network)
  }

  /// Claims `id` ahead of a free worker. On disk the row is `running` with no start time: after
  /// a crash, ``load(_:now:)`` makes it due again without using an attempt.
  mutating func claimAhead(_ id: TaskId, now: WallInstant, _ effects: inout Effects) {
    guard var entry = entries[id], let waiting = entry.waiting else { return }
    let token = newToken()
    let expedited = entry.row.hint.isExpedited && !waiting.demoted
    if expedited { noteExpeditedStart(now) }
    let ticket = RunTicket(
      token: token, taskId: id, attempt: entry.row.attempt, input: entry.row.input,
      budget: entry.row.budget, inhibitPolicy: entry.row.inhibitPolicy, gate: nil,
      claimedAhead: true, relaxed: entry.relaxedFor != nil,
      bandwidth: entry.row.constraints.bandwidth)
    entry.phase = .claimed(ticket, forced: waiting.forced)
    entry.row.state = .running
    entry.row.lastRunStartedAt = nil
    entry.row.updatedAt = now
    effects.ops.append(.upsert(entry.row))
    entries[id] = entry
    addLiveRun(token, id)
    if expedited { expeditedClaims.append(token) } else { standardClaims.append(token) }
    effects.tickets.append(ticket)
  }

  /// The driver enqueued the claim made ahead `token` at store position `sequence`: its worker,
  /// once promoted, is invoked only after that commit.
  mutating func claimEnqueued(_ token: RunToken, at sequence: StoreWriter.Sequence) {
    guard let id = liveRuns[token], case .claimed(var ticket, let forced) = entries[id]?.phase,
      ticket.token == token
    else { return }
    ticket.claimSequence = sequence
    entries[id]?.phase = .claimed(ticket, forced: forced)
  }

  /// Hands claims made ahead to the free slots (expedited first): each is invoked now, and its
  /// start is written with the next commit without being waited for. A claim whose constraints
  /// no longer hold goes back to its queue.
  mutating func promoteClaims(now: WallInstant, _ effects: inout Effects) {
    while runsInSlots < settings.concurrencyLimit,
      let token = expeditedClaims.popFirst() ?? standardClaims.popFirst()
    {
      guard let id = liveRuns[token], var entry = entries[id],
        case .claimed(let ticket, let forced) = entry.phase, ticket.token == token
      else {
        _ = endLiveRun(token)
        continue
      }
      let exempt = forced || entry.overridden
      let allowed =
        exempt
        || (networkNeed(of: entry).isSatisfied(by: network)
          && unmetDevice(entry.constraints).isEmpty)
      guard allowed else {
        releaseClaim(id, token, now: now, &effects)
        continue
      }
      markInvoked(&entry, token: token, now: now, exempt: exempt)
      entry.row.updatedAt = now
      entries[id] = entry
      effects.ops.append(.markStarted(entry.row))
      effects.events.append(event(id, .workStarted(attempt: entry.row.attempt), now))
      effects.promotions.append(ticket)
    }
  }

  /// Forgets the claim `token` (its task was cancelled or replaced): no worker was invoked.
  mutating func dropClaim(_ token: RunToken, _ effects: inout Effects) {
    _ = endLiveRun(token)
    expeditedClaims.removeAll { $0 == token }
    standardClaims.removeAll { $0 == token }
  }

  /// Gives the claim `token` of `id` back: the task is pending again, no attempt used.
  mutating func releaseClaim(
    _ id: TaskId, _ token: RunToken, now: WallInstant, _ effects: inout Effects
  ) {
    dropClaim(token, &effects)
    update(id) { entry in
      var waiting = Waiting()
      if case .claimed(_, let forced) = entry.phase { waiting.forced = forced }
      entry.phase = .idle(waiting)
      entry.row.state = .pending
      entry.row.updatedAt = now
      effects.ops.append(.upsert(entry.row))
    }
    rearm(id)
  }

  /// At shutdown: every claim that has no worker yet is given back (pending, durable).
  mutating func releaseAllClaims(now: WallInstant, _ effects: inout Effects) {
    for token in Array(expeditedClaims) + Array(standardClaims) {
      guard let id = liveRuns[token] else { continue }
      releaseClaim(id, token, now: now, &effects)
    }
  }
}
