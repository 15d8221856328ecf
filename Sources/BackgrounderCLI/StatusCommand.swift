import ArgumentParser
import Logging
import Reachability

/// `backgrounder status`: network (and later power and tasks) status.
struct StatusCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Show network, power and task status."
  )

  @Flag(help: "Print one JSON document (NDJSON lines with --watch).")
  var json = false

  @Flag(help: "Keep running and print one line per change.")
  var watch = false

  @Option(name: .customLong("sysfs-root"), help: "Root of the sysfs tree for link lookups.")
  var sysfsRoot = "/sys"

  @Option(help: "Feed this LINKTYPE_NETLINK pcap through the model instead of the live socket.")
  var replay: String?

  func run() async throws {
    let configuration = ReachabilityConfiguration(sysfsRoot: sysfsRoot)
    if let replay {
      try runReplay(path: replay, configuration: configuration)
      return
    }
    let logger = Logger(label: "backgrounder.reachability") {
      StreamLogHandler.standardError(label: $0)
    }
    let monitor = ReachabilityMonitor(configuration: configuration, logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await monitor.run() }
      for await status in monitor.statusUpdates() {
        try emit(status, observedAt: NetworkTimestamp.nowMicroseconds())
        if !watch { break }
      }
      group.cancelAll()
      while try await group.next() != nil {}
    }
  }

  private func runReplay(path: String, configuration: ReachabilityConfiguration) throws {
    let result: ReachabilityReplay.Result
    do {
      result = try ReachabilityReplay.replay(pcapAt: path, configuration: configuration)
    } catch {
      NetworkOutput.error("\(error)")
      throw ExitCode.failure
    }
    for warning in result.warnings { NetworkOutput.warning(warning) }
    if watch {
      for step in result.steps { try emit(step.status, observedAt: step.timestampMicroseconds) }
    } else {
      try emit(result.finalStatus, observedAt: nil)
    }
  }

  private func emit(_ status: NetworkStatus, observedAt microseconds: Int64?) throws {
    let observedAt = watch ? microseconds.map(NetworkTimestamp.rfc3339(microseconds:)) : nil
    if json {
      NetworkOutput.line(
        try NetworkOutput.json(StatusDocument(observedAt: observedAt, network: status)))
    } else if let observedAt {
      NetworkOutput.line(NetworkStatusText.line(status, observedAt: observedAt))
    } else {
      NetworkOutput.line(NetworkStatusText.report(status))
    }
  }
}
