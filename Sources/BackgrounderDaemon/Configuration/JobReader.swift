import Backgrounder

/// Turns one `[[job]]` table into a validated `JobDefinition`.
enum JobReader {
  static let keys: Set<String> = [
    "id", "command", "every", "flex", "once", "delay", "network", "requires-charging",
    "requires-battery-not-low", "budget", "backoff", "environment", "working-directory",
    "expedited",
  ]

  static func read(_ job: TableReader) throws(ConfigurationError) -> JobDefinition {
    try job.rejectUnknownKeys(keys)
    guard let id = try job.string("id") else {
      throw job.error("id", "missing (every job needs an id)")
    }
    do {
      _ = try TaskId(id)
    } catch {
      throw job.error("id", "\(error)")
    }
    guard let command = try job.stringArray("command") else {
      throw job.error(
        "command", "missing (an argv array such as [\"rsync\", \"-a\", \"src\", \"dst\"])")
    }
    guard let program = command.first, !program.isEmpty else {
      throw job.error("command", "must name a program as its first element")
    }
    var definition = JobDefinition(id: id, command: command, schedule: try schedule(of: job))
    if let network = try job.string("network") {
      guard let value = JobDefinition.Network(rawValue: network) else {
        throw job.error(
          "network", "expected \"none\", \"any\" or \"unmetered\", got \"\(network)\"")
      }
      definition.network = value
    }
    definition.requiresCharging = try job.bool("requires-charging") ?? false
    definition.requiresBatteryNotLow = try job.bool("requires-battery-not-low") ?? false
    if let budget = try job.duration("budget") {
      guard budget >= .seconds(1) else { throw job.error("budget", "must be at least 1s") }
      definition.budget = budget
    }
    if let backoff = try job.table("backoff") { definition.backoff = try read(backoff: backoff) }
    definition.environment = try job.stringTable("environment") ?? [:]
    definition.workingDirectory = try job.string("working-directory")
    definition.expedited = try job.bool("expedited") ?? false
    return definition
  }

  private static func schedule(of job: TableReader) throws(ConfigurationError)
    -> JobDefinition.Schedule
  {
    let once = try job.bool("once") ?? false
    if let every = try job.duration("every") {
      if once { throw job.error("once", "a job has either `every` or `once = true`, not both") }
      if job.contains("delay") {
        throw job.error("delay", "only one-time (`once = true`) jobs take a delay")
      }
      guard every >= .seconds(60) else { throw job.error("every", "must be at least 1m") }
      let flex = try job.duration("flex")
      if let flex, flex <= .zero || flex >= every {
        throw job.error("flex", "must be greater than 0 and less than `every`")
      }
      return .every(every, flex: flex)
    }
    guard once else {
      throw job.error(nil, "needs a schedule: `every = \"4h\"` or `once = true`")
    }
    if job.contains("flex") {
      throw job.error("flex", "only periodic (`every`) jobs take a flex window")
    }
    return .once(delay: try job.duration("delay") ?? .zero)
  }

  private static func read(backoff: TableReader) throws(ConfigurationError) -> JobDefinition.Backoff
  {
    try backoff.rejectUnknownKeys(["policy", "initial", "max-attempts", "jitter"])
    var result = JobDefinition.Backoff()
    if let policy = try backoff.string("policy") {
      guard let value = JobDefinition.Backoff.Policy(rawValue: policy) else {
        throw backoff.error("policy", "expected \"linear\" or \"exponential\", got \"\(policy)\"")
      }
      result.policy = value
    }
    if let initial = try backoff.duration("initial") {
      guard initial >= .seconds(10), initial <= .seconds(5 * 3600) else {
        throw backoff.error("initial", "must be between 10s and 5h")
      }
      result.initial = initial
    }
    result.maxAttempts = try backoff.int("max-attempts", in: 1...30) ?? 10
    result.jitter = try backoff.double("jitter", in: 0...1) ?? 0
    return result
  }
}
