extension Backgrounder {
  /// The metered budgets now stand at `standings` (the host counts the bytes: see
  /// ``LinkByteMeter`` and ``MeteredBudget/standing(of:at:zone:)``). A task whose
  /// ``WorkConstraints/networkRequired`` is `.unmetered` and that has a
  /// ``WorkConstraints/meteredBudget`` may use a metered link while its standing is not spent;
  /// once its own budget or the shared one (``MeteredBudgetStandings/daemon``) is spent, it
  /// waits for an unmetered link (``PendingPredicate/meteredBudget``) and a run of it on a
  /// metered link is stopped (``StopReason/networkMetered``). A budgeted task with no standing
  /// does not use metered links. Call again when bytes were counted, and when a budget frees
  /// (``MeteredBudgetStanding/freesAt``).
  public func meteredBudgetsChanged(_ standings: MeteredBudgetStandings) {
    guard let runtime else { return }
    runtime.step { machine, now in ((), machine.meteredBudgetsChanged(standings, now: now)) }
    runtime.wake.fire()
  }
}
