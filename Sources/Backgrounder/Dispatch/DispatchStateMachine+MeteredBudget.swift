extension DispatchStateMachine {
  /// What `entry` needs of the network (its constraints as relaxed, ``Entry/constraints``) once
  /// the metered budgets are applied:
  /// - the daemon's budget spent: every task needing the network needs an unmetered link;
  /// - a `networkRequired = .unmetered` task with its own budget: a metered link does while
  ///   its budget is not spent (as `.any`); once spent, or while its standing is not known
  ///   (unknown is not permission), it needs an unmetered link.
  func networkNeed(of entry: Entry) -> NetworkNeed {
    let constraints = entry.constraints
    var need = constraints.networkNeed
    guard need.requirement != .none else { return need }
    if let shared = meteredBudgets.daemon, shared.isSpent {
      need.meteredBudgetSpent = MeteredBudgetWait(scope: .daemon, standing: shared)
      return need
    }
    guard need.requirement == .unmetered, constraints.meteredBudget != nil,
      let own = meteredBudgets.tasks[entry.row.id]
    else { return need }
    if own.isSpent {
      need.meteredBudgetSpent = MeteredBudgetWait(scope: .job, standing: own)
    } else {
      need.requirement = .any
    }
    return need
  }

  /// The wait for a spent budget, when that alone keeps `need` unmet on the current network
  /// (it is usable, but metered).
  func meteredBudgetPredicate(_ need: NetworkNeed) -> PendingPredicate? {
    guard let wait = need.meteredBudgetSpent, network.isKnown, network.isDataMetered,
      NetworkRequirement.any.isSatisfied(by: network), need.allowList.unmet(by: network) == nil
    else { return nil }
    if need.requirement == .notRoaming && !network.isKnownNotRoaming { return nil }
    return .meteredBudget(wait)
  }

  /// The budgets' standings changed (bytes were counted, a window slid or reset): what
  /// ``networkChanged(_:now:)`` does for a network change — release work that may now use a
  /// metered link, update what waiting work waits for, and stop a run on a metered link whose
  /// budget is now spent (``StopReason/networkMetered``, a lost condition).
  mutating func meteredBudgetsChanged(_ standings: MeteredBudgetStandings, now: WallInstant)
    -> Effects
  {
    guard standings != meteredBudgets else { return Effects() }
    meteredBudgets = standings
    // Waiting work whose numbers changed (more used, a later release) is shown as it is now:
    // its network predicate differs from the one it holds.
    return networkChanged(network, now: now)
  }
}
