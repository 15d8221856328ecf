import ArgumentParser
import Logging
import Reachability
import ServiceLifecycle

/// `backgrounder capture`: record rtnetlink messages as pcapng, with each link's sysfs facts.
struct CaptureCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "capture",
    abstract: "Record the rtnetlink messages the monitor sees as a pcapng file.",
    discussion: "Stops after --duration seconds, or on SIGINT / SIGTERM."
  )

  @Option(
    help: ArgumentHelp(
      "The pcapng file to write (mode 0600; LINKTYPE_NETLINK, readable by tshark), with the "
        + "sysfs facts of each link as packet comments, so `status --replay` gives this "
        + "machine's answer anywhere.", valueName: "file.pcapng"))
  var output: String

  @Option(help: "Stop after this many seconds.")
  var duration: Double?

  func validate() throws {
    if let duration, !(duration > 0) {
      throw ValidationError("--duration must be a positive number of seconds")
    }
  }

  func run() async throws {
    let logger = Logger(label: "backgrounder.capture") {
      StreamLogHandler.standardError(label: $0)
    }
    let capture = try NetlinkCapture(path: output)
    let monitor = ReachabilityMonitor(
      configuration: ReachabilityConfiguration(), logger: logger, capture: capture)
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: [monitor], gracefulShutdownSignals: [.sigint, .sigterm], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      if let duration {
        tasks.addTask {
          try await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
          await group.triggerGracefulShutdown()
        }
      }
      try await tasks.next()
      tasks.cancelAll()
    }
    try capture.close()
  }
}
