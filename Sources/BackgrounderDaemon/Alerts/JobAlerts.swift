/// What tells someone that a job is broken: `alert-after` (staleness) and the `on-failure` and
/// `on-stale` hooks of a `[[job]]` table, or the `[daemon]` defaults of the hooks.
package struct JobAlerts: Sendable, Equatable {
  /// `alert-after = "3d"`: no success within this time (from the job's creation or its last
  /// success) is a health problem.
  package var alertAfter: Duration?
  /// `on-failure = [argv…]`: run when a run of the job ended in failure.
  package var onFailure: [String]?
  /// `on-stale = [argv…]`: run once when the job becomes stale (again only after a success).
  package var onStale: [String]?

  package init(alertAfter: Duration? = nil, onFailure: [String]? = nil, onStale: [String]? = nil) {
    self.alertAfter = alertAfter
    self.onFailure = onFailure
    self.onStale = onStale
  }

  /// Whether nothing is set.
  package var isEmpty: Bool { alertAfter == nil && onFailure == nil && onStale == nil }

  /// These settings, with the hooks this job does not set taken from `defaults`.
  package func merged(withDefaults defaults: JobAlerts) -> JobAlerts {
    JobAlerts(
      alertAfter: alertAfter, onFailure: onFailure ?? defaults.onFailure,
      onStale: onStale ?? defaults.onStale)
  }
}

/// Reads the alert keys of a `[[job]]` table (all three) or of `[daemon]` (the hooks).
enum JobAlertsReader {
  /// The keys of a `[[job]]` table.
  static let jobKeys = ["alert-after", "on-failure", "on-stale"]
  /// The keys of `[daemon]`: the hooks every job without its own gets.
  static let daemonKeys = ["on-failure", "on-stale"]

  /// The alert settings of `table` (`alert-after` only when `jobTable`).
  static func read(_ table: TableReader, jobTable: Bool) throws(ConfigurationError) -> JobAlerts {
    var alerts = JobAlerts()
    if jobTable, let after = try table.duration("alert-after") {
      guard after > .zero else {
        throw table.error("alert-after", "must be longer than zero (such as \"3d\")")
      }
      alerts.alertAfter = after
    }
    alerts.onFailure = try hook("on-failure", in: table)
    alerts.onStale = try hook("on-stale", in: table)
    return alerts
  }

  private static func hook(_ key: String, in table: TableReader) throws(ConfigurationError)
    -> [String]?
  {
    guard let argv = try table.stringArray(key) else { return nil }
    guard let program = argv.first, !program.isEmpty else {
      throw table.error(key, "an argv array such as [\"/usr/local/bin/notify\", \"backup\"]")
    }
    return argv
  }
}
