import ArgumentParser
import BackgrounderDaemon
import Logging
import Reachability
import ServiceLifecycle

/// `backgrounder capture`: record rtnetlink messages as pcapng, with each link's sysfs facts.
struct CaptureCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "capture",
    abstract: "Record the rtnetlink messages the monitor sees as a pcapng file.",
    discussion: "Stops after --duration, or on SIGINT / SIGTERM."
  )

  @Option(
    help: ArgumentHelp(
      "The pcapng file to create (mode 0600; LINKTYPE_NETLINK, readable by tshark), with the "
        + "sysfs facts of each link as packet comments, so `status --replay` gives this "
        + "machine's answer anywhere. An existing file is refused unless --force.",
      valueName: "file.pcapng"))
  var output: String

  @Flag(
    help: ArgumentHelp(
      "Replace an existing --output file (it must be a regular file of yours; it is made "
        + "0600)."))
  var force = false

  @OptionGroup var config: ConfigOption

  @Option(
    help: ArgumentHelp("Stop after this long, e.g. 30s or 5m.", valueName: "duration"),
    transform: DurationArgument.parse)
  var duration: DurationArgument?

  func validate() throws {
    if let duration, duration.value <= .zero {
      throw ValidationError("--duration must be longer than 0s")
    }
  }

  func run() async throws {
    let logger = Logger(label: "backgrounder.capture") {
      StreamLogHandler.standardError(label: $0)
    }
    // The config's [network] overrides, as the daemon would apply them.
    let reachability =
      try config.loadIfPresent(decodingJobs: false)?.reachabilityConfiguration(sysfsRoot: "/sys")
      ?? ReachabilityConfiguration()
    let capture: NetlinkCapture
    do {
      capture = try NetlinkCapture(path: output, replacingExisting: force)
    } catch {
      throw OperatorError("cannot write \(output): \(error)")
    }
    let monitor = ReachabilityMonitor(
      configuration: reachability, logger: logger, capture: capture)
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: [monitor], gracefulShutdownSignals: [.sigint, .sigterm], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask {
        do {
          try await group.run()
        } catch {
          throw OperatorError("capture to \(output) failed: \(error)")
        }
      }
      if let duration {
        tasks.addTask {
          try await Task.sleep(for: duration.value)
          await group.triggerGracefulShutdown()
        }
      }
      try await tasks.next()
      tasks.cancelAll()
    }
    do {
      try capture.close()
    } catch {
      throw OperatorError("cannot finish \(output): \(error)")
    }
  }
}
