import ArgumentParser
import BackgrounderDaemon
import Logging
import ServiceLifecycle

/// `backgrounder run`: the daemon.
struct RunCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Run the daemon: schedule the config's jobs and run them when constraints allow.",
    discussion: """
      SIGHUP reloads the config; SIGTERM/SIGINT stop dispatching, cancel running jobs (recorded
      as retry) and exit. Under systemd (Type=notify) it reports READY, STATUS and watchdog
      pings through $NOTIFY_SOCKET. Logs go to stderr (the journal under systemd).
      """
  )

  @OptionGroup var config: ConfigOption

  @Option(
    help: ArgumentHelp(
      "Keep this Prometheus textfile up to date (overrides [metrics] file).", valueName: "path"))
  var metricsFile: String?

  @Option(name: .customLong("sysfs-root"), help: ArgumentHelp("Root of sysfs.", valueName: "dir"))
  var sysfsRoot = "/sys"

  @Option(
    help: ArgumentHelp("Time between SIGTERM and SIGKILL for a stopped job.", valueName: "duration")
  )
  var killGrace: DurationArgument?

  func run() async throws {
    LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
    let logger = Logger(label: "backgrounder")
    _ = try config.load()  // fail fast, with file, line and key, before anything starts
    var options = Daemon.Options(configPath: config.path)
    options.sysfsRoot = sysfsRoot
    options.metricsFile = metricsFile
    if let killGrace { options.killGracePeriod = killGrace.value }
    let daemon = Daemon(options: options, logger: logger)
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: [.init(service: daemon)], gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger))
    try await group.run()
  }
}
