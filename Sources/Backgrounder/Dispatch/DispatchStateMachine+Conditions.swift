extension DispatchStateMachine {
  /// The network changed: release gates that are now satisfied, re-arm deferred work at
  /// once (instead of waiting out its backoff), and stop running work that lost its network.
  mutating func networkChanged(_ conditions: NetworkConditions, now: WallInstant) -> Effects {
    var effects = Effects()
    setNetwork(conditions)
    for (id, entry) in entries {
      let requirement = networkNeed(of: entry)
      guard !requirement.isNone else { continue }
      let satisfied = requirement.isSatisfied(by: conditions)
      switch entry.phase {
      case .gating(let token):
        if satisfied {
          effects.gateReleases.append(token)
        } else if entry.row.blockedOn != [networkPredicate(requirement)] {
          // Still at the gate, for something else now (a source answered: captive portal).
          let predicate = networkPredicate(requirement)
          update(id) { entry in
            entry.row.blockedOn = [predicate]
            entry.row.updatedAt = now
            effects.ops.append(.upsert(entry.row))
          }
        }
      case .claimed:
        // Checked again when a worker is free.
        continue
      case .running(let run):
        if !run.exempt, let reason = requirement.lossReason(under: conditions) {
          conditionLost(run.token, of: id, reason: reason, now: now, &effects)
        }
      case .idle:
        let waiting = entry.row.blockedOn.contains { Self.isNetwork($0) }
        if satisfied && waiting {
          update(id) { entry in
            entry.row.blockedOn.removeAll { Self.isNetwork($0) }
            if entry.row.deferrals > 0 && entry.row.state == .backoff {
              entry.row.state = .pending
              entry.row.nextRun = now
            }
            entry.row.updatedAt = now
            effects.ops.append(.upsert(entry.row))
          }
          rearm(id)
        } else if !satisfied && waiting,
          !entry.row.blockedOn.contains(networkPredicate(requirement))
        {
          // Still waiting, for something else now (e.g. captive portal → no network).
          let predicate = networkPredicate(requirement)
          update(id) { entry in
            entry.row.blockedOn.removeAll { Self.isNetwork($0) }
            entry.row.blockedOn.append(predicate)
            entry.row.updatedAt = now
            effects.ops.append(.upsert(entry.row))
          }
        }
      }
    }
    resumePausedRuns(now: now, &effects)
    return effects
  }

  /// Power changed: release blocked work that is now allowed, update what blocked work waits
  /// for, and stop running work that lost its power constraint.
  mutating func powerChanged(_ conditions: PowerConditions, now: WallInstant) -> Effects {
    setPower(conditions)
    return deviceConditionsChanged(now: now)
  }

  /// Power or mounts changed: what ``powerChanged(_:now:)`` does, for both.
  mutating func deviceConditionsChanged(now: WallInstant) -> Effects {
    var effects = Effects()
    for (id, entry) in entries {
      let unmet = unmetDevice(entry.constraints)
      switch entry.phase {
      case .running(let run):
        // A run is stopped for a known loss only, never because a condition became unknown.
        if !run.exempt && !entry.overridden,
          let reason = knownLoss(unmetWhileRunning(entry.constraints))
        {
          conditionLost(run.token, of: id, reason: reason, now: now, &effects)
        }
      case .gating, .claimed:
        continue
      case .idle:
        guard entry.row.state == .blocked,
          entry.row.blockedOn.contains(where: { Self.isDeviceCondition($0) })
        else { continue }
        if unmet.isEmpty {
          update(id) { entry in
            entry.row.state = .pending
            entry.row.blockedOn.removeAll { Self.isDeviceCondition($0) }
            entry.row.updatedAt = now
            effects.ops.append(.upsert(entry.row))
          }
          rearm(id)
        } else if entry.row.blockedOn.filter({ Self.isDeviceCondition($0) }) != unmet {
          // Still blocked, for something else now (charged, but the disk is not mounted).
          update(id) { entry in
            entry.row.blockedOn.removeAll { Self.isDeviceCondition($0) }
            entry.row.blockedOn += unmet
            entry.row.updatedAt = now
            effects.ops.append(.upsert(entry.row))
          }
        }
      }
    }
    resumePausedRuns(now: now, &effects)
    return effects
  }

  /// Stops accepting work, gives back the claims that have no worker yet and stops every run
  /// in flight.
  mutating func beginShutdown(now: WallInstant) -> Effects {
    var effects = Effects()
    stopAccepting()
    releaseAllClaims(now: now, &effects)
    for token in liveRuns.keys.sorted(by: { $0.value < $1.value }) {
      effects.stops.append((token, .shutdown))
    }
    return effects
  }

  // MARK: - Test driver hooks

  /// Treats every constraint of `id` as met (gate, power, and no stop on constraint loss).
  mutating func overrideConstraints(_ id: TaskId, now: WallInstant) -> Effects {
    var effects = Effects()
    guard let entry = entries[id] else { return effects }
    update(id) { $0.overridden = true }
    switch entry.phase {
    case .gating(let token):
      effects.gateReleases.append(token)
    case .running, .claimed:
      break
    case .idle:
      if entry.row.state == .blocked {
        update(id) { entry in
          entry.row.state = .pending
          entry.row.blockedOn.removeAll { $0 != .workerNotRegistered }
          entry.row.updatedAt = now
          effects.ops.append(.upsert(entry.row))
        }
      }
      rearm(id)
    }
    return effects
  }

  /// Makes an idle task due now (its initial delay or period elapsed). Returns whether the
  /// task exists and is of the given kind.
  mutating func makeDue(_ id: TaskId, kind: TaskKind, now: WallInstant) -> Effects? {
    guard let entry = entries[id], entry.row.kind == kind else { return nil }
    var effects = Effects()
    if entry.phase.isIdle, let next = entry.row.nextRun, next > now {
      update(id) { entry in
        entry.row.nextRun = now
        entry.row.updatedAt = now
        effects.ops.append(.upsert(entry.row))
      }
      rearm(id)
    }
    return effects
  }
}
