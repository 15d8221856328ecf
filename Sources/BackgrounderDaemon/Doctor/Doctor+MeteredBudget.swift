extension Doctor {
  /// How the bytes of metered budgets (a job's `metered-budget`, `[network] metered-budget`)
  /// are counted, when one is set: per run by the kernel where runs get a cgroup v2 of their
  /// own (`accounting: "cgroup"` in `history`), else from the primary link's counters over
  /// each run, so other traffic on the link counts too (`accounting: "link"`).
  func checkByteAccounting(_ configuration: DaemonConfiguration) -> DoctorFinding? {
    let budgeted = configuration.jobs.filter { $0.meteredBudget != nil }.map(\.id)
    guard configuration.meteredBudget != nil || !budgeted.isEmpty else { return nil }
    let scope =
      configuration.meteredBudget != nil
      ? "the daemon's metered budget (every job's runs)"
      : "the metered budget of \(budgeted.joined(separator: ", "))"
    return .init(
      .note, "metered budget",
      "\(scope) counts each run's own bytes in the kernel when the daemon has a delegated "
        + "cgroup v2 and may load BPF programs (history: accounting \"cgroup\"); otherwise "
        + "from the primary link's counters over each run (accounting \"link\"): other "
        + "traffic on the link while a run goes counts too, so the count is high rather than "
        + "low. A running daemon says which (doctor: \"run bytes\"; status --json: "
        + "daemon.runBytes)")
  }
}
