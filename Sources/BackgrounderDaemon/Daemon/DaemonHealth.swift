import Backgrounder

/// The running daemon's health as `status` and `doctor` show it.
package enum DaemonHealth {
  /// What the daemon behind `socketPath` reports: its problems and who it is (its `info`, nil
  /// from a daemon that does not say); nil when no daemon answers.
  /// - Throws: ``ControlSocketError`` other than `noDaemon` (e.g. a refused peer).
  package static func report(socketPath: String) async throws(ControlSocketError)
    -> (problems: [HealthProblem], daemon: DaemonInfo?)?
  {
    do {
      let response = try await ControlClient(path: socketPath).send(.health)
      return (response.problems ?? [], response.daemon)
    } catch .noDaemon {
      return nil
    }
  }

  /// `doctor` lines for the daemon's health: a note when no daemon runs, `ok` when it reports
  /// no problem, one problem line per detected problem otherwise; then how it counts runs'
  /// bytes, when it says.
  package static func findings(
    _ report: (problems: [HealthProblem], daemon: DaemonInfo?)?
  ) -> [DoctorFinding] {
    guard let report else {
      return [.init(.note, "health", "no daemon is running; no runtime health to report")]
    }
    var findings: [DoctorFinding] =
      report.problems.isEmpty
      ? [.init(.ok, "health", "the running daemon reports no problems")]
      : report.problems.map { .init(.problem, "health", $0.description) }
    if let choice = report.daemon?.runBytes { findings.append(runBytesFinding(choice)) }
    return findings
  }

  /// How the running daemon counts runs' bytes (for metered budgets, `history` and the
  /// metrics), in words.
  package static func runBytesFinding(_ choice: RunBytesChoice) -> DoctorFinding {
    switch choice.accounting {
    case .cgroup:
      .init(.ok, "run bytes", "counted per run by the kernel: \(choice.reason)")
    case .link:
      .init(
        .note, "run bytes",
        "counted from the primary link's counters (approximate: other traffic on the link "
          + "counts too): \(choice.reason)")
    }
  }
}
