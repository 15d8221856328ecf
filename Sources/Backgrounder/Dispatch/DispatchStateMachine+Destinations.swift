extension DispatchStateMachine {
  /// The destinations were checked again (a network change, a retry while unreachable): release
  /// work whose destination answers now, and stop running work whose destination is known to
  /// fail (a retry, no attempt used). A destination that is only not checked yet (a new
  /// network) stops nothing: a run is never stopped because a condition became unknown.
  mutating func destinationsChanged(_ conditions: DestinationConditions, now: WallInstant)
    -> Effects
  {
    setDestinations(conditions)
    return deviceConditionsChanged(now: now)
  }

  /// The deferral reason of device predicates `unmet` that hold no power predicate.
  static func deferral(_ unmet: [PendingPredicate]) -> DeferralReason {
    unmet.contains(where: { if case .mounted = $0 { true } else { false } })
      ? .mountNotMet : .reachableNotMet
  }
}
