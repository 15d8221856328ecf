import ArgumentParser
import BackgrounderDaemon
import Foundation
import Logging

/// `backgrounder run`: the daemon.
struct RunCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "run",
    abstract: "Run the daemon: schedule the config's jobs and run them when constraints allow.",
    discussion: """
      SIGHUP reloads the config; SIGTERM/SIGINT stop dispatching, cancel running jobs \
      (recorded as retry) and exit 0. A part that cannot start or fails (control socket, store, \
      netlink, …) stops the daemon with an error naming it and exit status 1.

      Under systemd (Type=notify) it reports READY=1 once the store is open, the control \
      socket listens and the network and power states are known, STATUS lines, and WATCHDOG=1 \
      pings only while the dispatch loop makes progress, through $NOTIFY_SOCKET. Logs go to \
      stderr (the journal under systemd).
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
    help: ArgumentHelp(
      "Time between the stop signal and SIGKILL for a stopped job without stop-timeout (10s).",
      valueName: "duration"),
    transform: DurationArgument.parse
  )
  var killGrace: DurationArgument?

  func run() async throws {
    // Under systemd, to the journal with the job's fields; else plain stderr lines.
    if JournalLogHandler.isStandardErrorJournal() {
      LoggingSystem.bootstrap { JournalLogHandler(label: $0) }
    } else {
      LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
    }
    let logger = Logger(label: "backgrounder")
    // Fail fast, with file, line and key, before anything starts; the daemon takes it as read.
    let loaded = try config.load()
    var options = Daemon.Options(configPath: config.path)
    options.sysfsRoot = sysfsRoot
    options.metricsFile = metricsFile
    if let killGrace { options.killGracePeriod = killGrace.value }
    // Consumed: this frame must not keep every job's definition alive while the daemon runs.
    try await Daemon(options: options, logger: logger).run(configuration: consume loaded)
  }
}
