import Backgrounder

/// The keys of a `[[job]]` that hold it until the user is away: `requires-idle = "10m"` (the
/// user has been idle that long according to logind) and `on-user-return = "continue" |
/// "pause" | "stop"` (what happens to a run going when the user comes back; default
/// `continue`, only with `requires-idle`).
enum IdleKeys {
  static let keys = ["requires-idle", "on-user-return"]

  /// The accepted `requires-idle`: a second to a day.
  static let requiresIdleRange: ClosedRange<Duration> = .seconds(1)...(.seconds(24 * 3600))

  /// Reads the keys of `job` into `definition` (checked later by ``problem(with:)``).
  static func read(
    _ job: TableReader, id: String, into definition: inout JobDefinition
  ) throws(ConfigurationError) {
    definition.requiresIdle = try job.duration("requires-idle")
    guard let text = try job.string("on-user-return") else { return }
    guard let policy = UserReturnPolicy(rawValue: text) else {
      throw job.error(
        "on-user-return",
        "job \(id): expected \"continue\", \"pause\" or \"stop\", got \"\(text)\"")
    }
    if definition.requiresIdle == nil {
      throw job.error("on-user-return", "job \(id): only jobs with `requires-idle`")
    }
    definition.onUserReturn = policy
  }

  /// The first rule the keys of `job` break, as the key and what is wrong; nil if none.
  static func problem(with job: JobDefinition) -> (key: String, message: String)? {
    if let idle = job.requiresIdle, !requiresIdleRange.contains(idle) {
      return ("requires-idle", "must be from 1s to 1d, got \(HumanText.duration(idle))")
    }
    if job.onUserReturn != nil && job.requiresIdle == nil {
      return ("on-user-return", "only jobs with `requires-idle`")
    }
    return nil
  }
}
