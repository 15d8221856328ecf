import Backgrounder

/// The running daemon's health as `status` and `doctor` show it.
package enum DaemonHealth {
  /// The problems the daemon behind `socketPath` reports; nil when no daemon answers.
  /// - Throws: ``ControlSocketError`` other than `noDaemon` (e.g. a refused peer).
  package static func problems(socketPath: String) async throws(ControlSocketError)
    -> [HealthProblem]?
  {
    do {
      return try await ControlClient(path: socketPath).send(.health).problems ?? []
    } catch .noDaemon {
      return nil
    }
  }

  /// `doctor` lines for the daemon's health: a note when no daemon runs, `ok` when it reports
  /// no problem, one problem line per detected problem otherwise.
  package static func findings(_ problems: [HealthProblem]?) -> [DoctorFinding] {
    guard let problems else {
      return [.init(.note, "health", "no daemon is running; no runtime health to report")]
    }
    if problems.isEmpty { return [.init(.ok, "health", "the running daemon reports no problems")] }
    return problems.map { .init(.problem, "health", $0.description) }
  }
}
