import Backgrounder

/// Turns one `[[job]]` table into a validated `JobDefinition`.
enum JobReader {
  static let keys: [String] =
    [
      "id", "command", "every", "flex", "once", "delay", "network", "requires-charging",
      "requires-battery-not-low", "budget", "backoff", "environment", "working-directory",
      "expedited", "inherit-environment", "inhibit", "wake-system", "environment-file",
      "stop-signal", "stop-timeout", "user", "group",
    ] + CalendarSettingsReader.keys + PrioritySettingsReader.keys + PlaceKeys.keys
    + JobAlertsReader.jobKeys + MeteredBudgetSettings.jobKeys + PauseKeys.keys + RelaxKeys.keys
    + BandwidthSettings.keys
    + IdleKeys.keys

  static func read(_ job: TableReader) throws(ConfigurationError) -> JobDefinition {
    try job.rejectUnknownKeys(keys)
    guard let id = try job.string("id") else {
      throw job.error("id", "missing (every job needs an id)")
    }
    guard let command = try job.stringArray("command") else {
      throw job.error(
        "command", "missing (an argv array such as [\"rsync\", \"-a\", \"src\", \"dst\"])")
    }
    let calendar = try CalendarSettingsReader.read(job)
    let schedule: JobDefinition.Schedule =
      if let events = calendar?.calendars, !events.isEmpty {
        .calendar(events.map(\.normalized))
      } else {
        try schedule(of: job)
      }
    var definition = JobDefinition(id: id, command: command, schedule: schedule)
    definition.timing = calendar.map(JobTiming.init)
    if let network = try job.string("network") {
      guard let value = JobDefinition.Network(rawValue: network) else {
        throw job.error(
          "network",
          "expected \"none\", \"any\", \"unmetered\" or \"not-roaming\", got \"\(network)\"")
      }
      definition.network = value
    }
    definition.meteredBudget = try MeteredBudgetSettings.read(job: job, network: definition.network)
    definition.bandwidth = try BandwidthSettings.read(job)
    definition.requiresCharging = try job.bool("requires-charging") ?? false
    definition.requiresBatteryNotLow = try job.bool("requires-battery-not-low") ?? false
    try PlaceKeys.read(job, into: &definition)
    definition.budget = try job.duration("budget")
    if let backoff = try job.table("backoff") { definition.backoff = try read(backoff: backoff) }
    definition.environment = try job.stringTable("environment") ?? [:]
    if let file = try job.string("environment-file") {
      if let problem = EnvironmentFile.problem(withPath: file) {
        throw job.error("environment-file", problem)
      }
      definition.environmentFile = file
    }
    definition.workingDirectory = try job.string("working-directory")
    definition.expedited = try job.bool("expedited") ?? false
    definition.inheritEnvironment = try job.bool("inherit-environment") ?? false
    definition.priority = try PrioritySettingsReader.read(job)
    if let inhibit = try job.string("inhibit") {
      guard let mode = InhibitPolicy(rawValue: inhibit) else {
        throw job.error(
          "inhibit", "expected \"delay\", \"block\" or \"none\", got \"\(inhibit)\"")
      }
      definition.inhibit = mode
    }
    definition.wakeSystem = try job.bool("wake-system") ?? false
    try readStop(job, id: id, into: &definition)
    try PauseKeys.read(job, id: id, into: &definition)
    definition.relax = try RelaxKeys.read(job)
    try IdleKeys.read(job, id: id, into: &definition)
    definition.user = try job.string("user")
    definition.group = try job.string("group")
    if let (key, message) = JobValidation.problem(
      with: definition, calendarParsed: calendar?.calendars.isEmpty == false)
    {
      throw job.error(key, message)
    }
    // The daemon reading the config runs the job: its user must exist here, and be one it may
    // switch to.
    if let (key, message) = RunIdentity.problem(user: definition.user, group: definition.group) {
      throw job.error(key, message)
    }
    return definition
  }

  /// `stop-signal` (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2, with or without
  /// `SIG`, any case) and `stop-timeout` (1 s to 1 h).
  private static func readStop(
    _ job: TableReader, id: String, into definition: inout JobDefinition
  ) throws(ConfigurationError) {
    if let name = try job.string("stop-signal") {
      guard let signal = StopSignal.parse(name) else {
        throw job.error(
          "stop-signal",
          "job \(id): expected SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2, got "
            + "\"\(name)\" (SIGKILL and SIGSTOP cannot be stop signals)")
      }
      definition.stopSignal = signal
    }
    if let timeout = try job.duration("stop-timeout") {
      guard StopSignal.timeoutRange.contains(timeout) else {
        throw job.error(
          "stop-timeout", "job \(id): must be from 1s to 1h, got \(timeout)")
      }
      definition.stopTimeout = timeout
    }
  }

  private static func schedule(
    of job: TableReader
  ) throws(ConfigurationError) -> JobDefinition.Schedule {
    let once = try job.bool("once") ?? false
    if let every = try job.duration("every") {
      if once { throw job.error("once", "a job has either `every` or `once = true`, not both") }
      if job.contains("delay") {
        throw job.error("delay", "only one-time (`once = true`) jobs take a delay")
      }
      return .every(every, flex: try job.duration("flex"))
    }
    guard once else {
      throw job.error(
        nil, "needs a schedule: `every = \"4h\"`, `calendar = \"daily\"` or `once = true`")
    }
    if job.contains("flex") {
      throw job.error("flex", "only periodic (`every`) jobs take a flex window")
    }
    return .once(delay: try job.duration("delay") ?? .zero)
  }

  private static func read(
    backoff: TableReader
  ) throws(ConfigurationError) -> JobDefinition.Backoff {
    try backoff.rejectUnknownKeys(["policy", "initial", "max-attempts", "jitter"])
    var result = JobDefinition.Backoff()
    if let policy = try backoff.string("policy") {
      guard let value = JobDefinition.Backoff.Policy(rawValue: policy) else {
        throw backoff.error("policy", "expected \"linear\" or \"exponential\", got \"\(policy)\"")
      }
      result.policy = value
    }
    result.initial = try backoff.duration("initial") ?? result.initial
    result.maxAttempts = try backoff.int("max-attempts", in: Int.min...Int.max) ?? 10
    result.jitter = try backoff.double("jitter", in: -Double.infinity...Double.infinity) ?? 0
    return result
  }
}
