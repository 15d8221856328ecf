extension DispatchStateMachine {
  /// The mount points changed: release work whose mount is there now, and stop running work
  /// whose mount went away (a retry, no attempt used), as for power.
  mutating func mountsChanged(_ conditions: MountConditions, now: WallInstant) -> Effects {
    setMounts(conditions)
    return deviceConditionsChanged(now: now)
  }

  /// The power and mount predicates `constraints` leave unmet now (all of them while their
  /// source is not known).
  func unmetDevice(_ constraints: WorkConstraints) -> [PendingPredicate] {
    constraints.unmetPower(power) + constraints.unmetMount(mounts)
      + constraints.unmetDestination(destinations)
      + constraints.unmetIdle(userIdle, at: idleJudgedAt)
  }

  /// The device predicates that matter to a run going: those of ``unmetDevice(_:)`` but the
  /// idle one when the user's return lets it continue (`onUserReturn = .continue`).
  func unmetWhileRunning(_ constraints: WorkConstraints) -> [PendingPredicate] {
    let unmet = unmetDevice(constraints)
    guard constraints.onUserReturn == .continue else { return unmet }
    return unmet.filter { !Self.isUserIdle($0) }
  }

  /// Why a run must stop for `unmet`, counting only losses whose source is known: a run is
  /// never stopped because a condition became unknown.
  func knownLoss(_ unmet: [PendingPredicate]) -> StopReason? {
    if power.isKnown && unmet.contains(.requiresCharging) { return .chargerDisconnected }
    if power.isKnown && unmet.contains(.requiresBatteryNotLow) { return .batteryLow }
    if mounts.isKnown && unmet.contains(where: { if case .mounted = $0 { true } else { false } }) {
      return .unmounted
    }
    if unmet.contains(where: { if case .reachable(_, .some) = $0 { true } else { false } }) {
      return .unreachable
    }
    if userIdle.isKnown && unmet.contains(where: Self.isUserIdle) { return .userReturned }
    return nil
  }

  /// Whether `predicate` is a condition of the device that blocks due work (power, mounts).
  static func isDeviceCondition(_ predicate: PendingPredicate) -> Bool {
    switch predicate {
    case .requiresCharging, .requiresBatteryNotLow, .mounted, .reachable, .userIdle: true
    default: false
    }
  }
}
