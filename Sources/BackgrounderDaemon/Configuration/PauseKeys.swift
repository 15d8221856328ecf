import Backgrounder

/// The keys of a `[[job]]` that say what happens to a run when a condition it needs is lost:
/// `on-condition-lost = "stop" | "pause"` (default `stop`) and `pause-max` (how long a run may
/// stay paused before it is stopped; default 1 h, only with `pause`).
enum PauseKeys {
  static let keys = ["on-condition-lost", "pause-max"]

  /// The longest `pause-max`: a week.
  static let pauseMaxRange: ClosedRange<Duration> = .seconds(1)...(.seconds(7 * 24 * 3600))

  /// Reads the keys of `job` into `definition` (checked later by ``problem(with:)``).
  static func read(
    _ job: TableReader, id: String, into definition: inout JobDefinition
  ) throws(ConfigurationError) {
    let pauseMax = try job.duration("pause-max")
    switch try job.string("on-condition-lost") {
    case nil, "stop"?:
      if pauseMax != nil {
        throw job.error("pause-max", "job \(id): only jobs with `on-condition-lost = \"pause\"`")
      }
    case "pause"?:
      definition.onConditionLost = .pause(max: pauseMax ?? ConditionLossPolicy.defaultPauseMax)
    case let other?:
      throw job.error(
        "on-condition-lost", "job \(id): expected \"stop\" or \"pause\", got \"\(other)\"")
    }
  }

  /// The first rule the keys of `job` break, as the key and what is wrong; nil if none.
  static func problem(with job: JobDefinition) -> (key: String, message: String)? {
    if let pauseMax = job.onConditionLost?.pauseMax, !pauseMaxRange.contains(pauseMax) {
      return ("pause-max", "must be from 1s to 7d, got \(HumanText.duration(pauseMax))")
    }
    return nil
  }
}
