extension Doctor {
  /// How the bytes of metered budgets (a job's `metered-budget`, `[network] metered-budget`)
  /// are counted, when one is set: from the primary link's counters over each run, so other
  /// traffic on the link counts too (`accounting: "link"` in `history`); there is no per-run
  /// (cgroup) counting.
  func checkByteAccounting(_ configuration: DaemonConfiguration) -> DoctorFinding? {
    let budgeted = configuration.jobs.filter { $0.meteredBudget != nil }.map(\.id)
    guard configuration.meteredBudget != nil || !budgeted.isEmpty else { return nil }
    let scope =
      configuration.meteredBudget != nil
      ? "the daemon's metered budget (every job's runs)"
      : "the metered budget of \(budgeted.joined(separator: ", "))"
    return .init(
      .note, "metered budget",
      "\(scope) counts bytes from the primary link's counters over each run (history: "
        + "accounting \"link\"): other traffic on the link while a run goes counts too, so "
        + "the count is high rather than low; per-run (cgroup) counting is not built")
  }
}
