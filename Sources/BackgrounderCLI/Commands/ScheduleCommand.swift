import ArgumentParser
import BackgrounderDaemon

/// `backgrounder schedule ID … --command ARGV…`: add a job that is not in the config file.
struct ScheduleCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "schedule",
    abstract: "Schedule a command job that is not in the config file.",
    discussion: """
      Example:
        backgrounder schedule dev.example.fetch --once --network any \\
          --command curl -fsSO https://example.org/manifest.json

      --command takes the rest of the line as the argv (no shell). Scheduling an existing id \
      replaces its definition. With no daemon running, the store is edited directly and the \
      job runs when the daemon starts.
      """
  )

  @OptionGroup var job: JobIdArgument
  @OptionGroup var config: ConfigOption

  @Option(
    help: ArgumentHelp("Run periodically, e.g. 4h (at least 1m).", valueName: "duration"),
    transform: DurationArgument.parse)
  var every: DurationArgument?

  @Option(
    help: ArgumentHelp("Flex window of a periodic job (less than --every).", valueName: "duration"),
    transform: DurationArgument.parse)
  var flex: DurationArgument?

  @Flag(help: "Run once.")
  var once = false

  @Option(
    help: ArgumentHelp("Delay before a one-time job may run.", valueName: "duration"),
    transform: DurationArgument.parse)
  var delay: DurationArgument?

  @Option(help: "Network requirement.")
  var network: JobDefinition.Network = .none

  @Flag(help: "Only run on external power.")
  var requiresCharging = false

  @Flag(help: "Only run when the battery is not low.")
  var requiresBatteryNotLow = false

  @Option(
    help: ArgumentHelp("Time allowed per run (default 10m).", valueName: "duration"),
    transform: DurationArgument.parse)
  var budget: DurationArgument?

  @Option(help: "Backoff policy.")
  var backoff: JobDefinition.Backoff.Policy = .exponential

  @Option(
    help: ArgumentHelp("First backoff delay (10s to 5h, default 30s).", valueName: "duration"),
    transform: DurationArgument.parse)
  var backoffInitial: DurationArgument?

  @Option(help: "Attempts per cycle before a retry becomes a failure (1 to 30).")
  var maxAttempts = 10

  @Option(
    name: .customLong("env"),
    help: ArgumentHelp("Environment variable for the command.", valueName: "name=value"))
  var environment: [String] = []

  @Option(help: ArgumentHelp("Working directory of the command.", valueName: "dir"))
  var workingDirectory: String?

  @Option(
    parsing: .remaining,
    help: ArgumentHelp("The command and its arguments (must come last).", valueName: "argv"))
  var command: [String] = []

  func validate() throws {
    if command.isEmpty { throw ValidationError("--command is required and must come last") }
    if (every != nil) == once { throw ValidationError("give exactly one of --every and --once") }
    if delay != nil && !once { throw ValidationError("--delay goes with --once") }
    if flex != nil && every == nil { throw ValidationError("--flex goes with --every") }
    if let bad = environment.first(where: { !$0.contains("=") }) {
      throw ValidationError("--env takes name=value, got \"\(bad)\"")
    }
    if let (key, message) = JobValidation.problem(with: definition) {
      throw ValidationError("\(key): \(message)")
    }
  }

  /// The job the flags describe.
  var definition: JobDefinition {
    let schedule: JobDefinition.Schedule =
      if let every { .every(every.value, flex: flex?.value) } else {
        .once(delay: delay?.value ?? .zero)
      }
    var job = JobDefinition(id: self.job.id, command: command, schedule: schedule)
    job.network = network
    job.requiresCharging = requiresCharging
    job.requiresBatteryNotLow = requiresBatteryNotLow
    job.budget = budget?.value
    job.backoff.policy = backoff
    job.backoff.initial = backoffInitial?.value ?? job.backoff.initial
    job.backoff.maxAttempts = maxAttempts
    for pair in environment {
      let parts = pair.split(separator: "=", maxSplits: 1)
      job.environment[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    job.workingDirectory = workingDirectory
    return job
  }

  func run() async throws {
    let configuration = try config.load()
    let job = definition
    try await DaemonConnection.send(.schedule(job), configuration) {
      let (ok, message) = try await OfflineStore.edit(
        configuration, logger: DaemonConnection.logger
      ) { _, jobs in await jobs.schedule(job, origin: .cli) }
      guard ok else { throw OperatorError(message) }
      print("\(message) (no daemon running: store edited; it runs when the daemon starts)")
    }
  }
}
