import ArgumentParser
import Backgrounder
import BackgrounderDaemon
import Foundation
import Logging
import NetworkHints
import PowerSource
import Reachability

/// `backgrounder status`: network, power and tasks.
struct StatusCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "Show network, power and task status.",
    discussion: """
      Network: whether a usable default route exists, the primary link, whether it is \
      metered and which signal decided.

      Power: external power, charging, battery level.

      Tasks (read-only from the store, safe while the daemon runs): state, next run, \
      attempts, last result and what each task waits for.
      """
  )

  @Flag(help: "Print one JSON document (NDJSON lines with --watch).")
  var json = false

  @Flag(help: "Print table cells in full (the last result's whole reason).")
  var wide = false

  @Flag(
    help: ArgumentHelp(
      "Keep running and print one line per network or power change, and per task change "
        + "reported by the daemon."))
  var watch = false

  @Option(
    name: .customLong("sysfs-root"),
    help: ArgumentHelp(
      "Root of the sysfs tree for link and power-supply lookups.", valueName: "dir"))
  var sysfsRoot = Self.defaultSysfsRoot

  /// `--sysfs-root` when not given.
  static let defaultSysfsRoot = "/sys"

  @Option(
    help: ArgumentHelp(
      "Feed this capture (pcapng from `capture`, or an older LINKTYPE_NETLINK pcap) through "
        + "the model instead of the live socket.",
      valueName: "file.pcapng"))
  var replay: String?

  @OptionGroup var config: ConfigOption

  @Option(
    help: ArgumentHelp(
      "The store to read tasks from (default: from the config).", valueName: "file"))
  var store: String?

  func run() async throws {
    // Status shows no job's settings: the `[[job]]` tables are parsed (TOML errors still fail)
    // but not decoded, about a third of reading a 1,000-job config.
    let daemonConfiguration = try config.loadIfPresent(decodingJobs: false)
    let reachability =
      daemonConfiguration?.reachabilityConfiguration(sysfsRoot: sysfsRoot)
      ?? ReachabilityConfiguration(sysfsRoot: sysfsRoot)
    let logger = Logger(label: "backgrounder.status") { StreamLogHandler.standardError(label: $0) }
    let probe = PowerProbe(sysfsRoot: sysfsRoot, logger: logger)
    let tasks = TaskSection(
      storePath: store ?? daemonConfiguration?.storePath ?? DefaultLocations.current().storePath)
    let socketPath =
      daemonConfiguration?.controlSocketPath ?? DefaultLocations.current().controlSocketPath
    let daemon = DaemonSection(socketPath: socketPath)
    // Asks the daemon (one control request answers the health and daemon sections).
    let printer = { [json, watch, wide] in
      StatusPrinter(
        json: json, watch: watch, tasks: tasks, health: HealthSection.read(socketPath: socketPath),
        daemon: daemon, wide: wide)
    }

    if let replay {
      try runReplay(path: replay, configuration: reachability, power: probe.status, printer())
    } else if watch {
      try await runWatch(
        reachability, hintsFrom: daemonConfiguration, probe: probe, logger: logger, printer())
    } else {
      // The daemon is asked and the store read in a task of their own, which runs once the
      // network was read on this thread (a one-shot status has no helper threads).
      let read = Task { () -> (StatusPrinter, StatusPrinter.Sections) in
        let printer = printer()
        return (printer, printer.readOneShotSections(now: Date()))
      }
      let monitor = ReachabilityMonitor(configuration: reachability, logger: logger)
      // One truth per machine: with a daemon running, its hints (NetworkManager's answers,
      // the probe's verdict, stale marks); without one, our own reading of NetworkManager.
      let network = try await firstStatus(
        of: monitor,
        hints: (daemonConfiguration ?? DaemonConfiguration(sourcePath: "")).hintsConfiguration,
        daemonHints: { await read.value.0.health.daemonHints }, logger: logger)
      let (printer, sections) = await read.value
      try printer.emit(network: network, power: probe.status, sections: sections)
      tasks.keepUntilExit()
    }
    if tasks.failed { throw ExitCode.failure }
  }

  /// The first status with every hint source settled: the daemon's hints when one answers,
  /// else those of a hints service of our own (bounded by its source timeout).
  private func firstStatus(
    of monitor: ReachabilityMonitor, hints configuration: NetworkHintsConfiguration,
    daemonHints: @escaping @Sendable () async -> LinkHints?, logger: Logger
  ) async throws -> NetworkStatus {
    // Read on this thread: no netlink thread for one look (issue #35: no helper threads in
    // one-shot commands).
    _ = try monitor.snapshot()
    if let hints = await daemonHints() {
      monitor.updateHints { $0 = hints }
      return monitor.status
    }
    // Read on this thread too: no event-loop thread for one look.
    try NetworkHintsService(monitor: monitor, configuration: configuration, logger: logger)
      .settleOnCallingThread()
    return monitor.status
  }

  private func runWatch(
    _ reachability: ReachabilityConfiguration, hintsFrom daemonConfiguration: DaemonConfiguration?,
    probe: PowerProbe, logger: Logger, _ printer: StatusPrinter
  ) async throws {
    let monitor = ReachabilityMonitor(configuration: reachability, logger: logger)
    // One truth per machine: with a daemon running, its view of the network (NetworkManager's
    // answers, the probe's verdict, stale marks) arrives on its change stream; without one, we
    // read NetworkManager ourselves.
    var daemonChanges: AsyncThrowingStream<TaskChange, any Error>?
    do {
      daemonChanges = try ControlClient(path: printer.daemon.socketPath).watch()
    } catch .noDaemon {
      Output.warning("no daemon is running: task changes are not shown")
    } catch {
      Output.warning("task changes are not shown: \(error)")
    }
    if daemonChanges != nil {
      // Not settled until the daemon's first network change replaces these hints.
      let since = Date().timeIntervalSince1970
      monitor.updateHints { $0.sources[.networkManager] = .waiting(since: since) }
    }
    let hints =
      daemonChanges != nil
      ? []
      : (daemonConfiguration ?? DaemonConfiguration(sourcePath: ""))
        .networkHintServices(monitor: monitor, logger: logger)
    let watch = StatusWatch(printer: printer, power: probe.status)
    // Printed on the monitor's thread, as each change is published.
    monitor.observeStatus { watch.networkChanged($0) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await monitor.run() }
      for service in hints { group.addTask { try await service.run() } }
      group.addTask { try await probe.run() }
      group.addTask {
        for await status in probe.statusUpdates() { watch.powerChanged(status) }
      }
      if let changes = daemonChanges {
        let (tasks, socketPath) = (printer.tasks, printer.daemon.socketPath)
        group.addTask {
          // Followed across restarts: when the stream ends the daemon stopped; the network and
          // power lines go on (the daemon's last hints stay), and once the socket answers again
          // the runs recorded meanwhile are printed and the new stream is followed.
          var changes = changes
          watch.followsDaemon(true)
          while true {
            do {
              for try await change in changes {
                if change.change == .network {
                  // The view first: our own status the hints settle is not printed over it.
                  watch.daemonViewChanged(change.view)
                  if let daemonHints = change.hints { monitor.updateHints { $0 = daemonHints } }
                } else {
                  watch.taskChanged(change)
                }
              }
            } catch {
              Output.warning("task changes are not shown: \(error)")
            }
            if Task.isCancelled { return }
            let known = tasks.read(now: Date())
            watch.daemonChanged(connected: false)
            guard let next = await Self.reconnect(to: socketPath) else { return }
            let connectedAt = Date()
            watch.daemonChanged(
              connected: true,
              missed: Self.missedRuns(
                known: known, now: tasks.read(now: connectedAt), until: connectedAt))
            changes = next
          }
        }
      }
      // Runs until the process is ended, or until the monitor, the probe or a hint service
      // fails: the error leaves the group, which cancels the rest.
      for try await _ in group {}
    }
  }

  /// A new task-change stream from the daemon behind `path`, asked every 250 ms until one
  /// answers; nil when cancelled.
  private static func reconnect(to path: String) async
    -> AsyncThrowingStream<TaskChange, any Error>?
  {
    while !Task.isCancelled {
      if let changes = try? ControlClient(path: path).watch() { return changes }
      try? await Task.sleep(for: .milliseconds(250))
    }
    return nil
  }

  /// The runs in `now` that ended after the last run of the same task in `known` (read when
  /// the daemon stopped) and by `until` (when the new stream was connected: later ones arrive
  /// on it), oldest first, as the daemon would have streamed them. Nothing when either read
  /// failed.
  static func missedRuns(known: [TaskStatus]?, now: [TaskStatus]?, until: Date) -> [TaskChange] {
    guard let known, let now else { return [] }
    var lastEnded: [TaskId: Date] = [:]
    for task in known { lastEnded[task.id] = task.recentRuns.map(\.endedAt).max() }
    var missed: [(Date, TaskChange)] = []
    for task in now {
      let after = lastEnded[task.id] ?? .distantPast
      for run in task.recentRuns where run.endedAt > after && run.endedAt <= until {
        let kind: TaskChange.Kind = run.outcome == "deferred" ? .deferred : .finished
        let detail =
          "attempt \(run.attempt): \(run.outcome)" + (run.reason.map { " (\($0))" } ?? "")
          + " while the daemon was not followed"
        missed.append(
          (
            run.endedAt,
            TaskChange(
              time: ISO8601DateFormatter().string(from: run.endedAt), task: task.id.rawValue,
              change: kind, detail: detail)
          ))
      }
    }
    return missed.sorted { $0.0 < $1.0 }.map(\.1)
  }

  private func runReplay(
    path: String, configuration: ReachabilityConfiguration, power: PowerStatus,
    _ printer: StatusPrinter
  ) throws {
    let result: ReachabilityReplay.Result
    do {
      result = try ReachabilityReplay.replay(pcapAt: path, configuration: configuration)
    } catch {
      Output.error("\(error)")
      throw ExitCode.failure
    }
    for warning in result.warnings { Output.warning(warning) }
    if watch {
      var encoder = StatusLineEncoder()
      var sections = WatchSections(printer: printer)
      for step in result.steps {
        Output.line(
          bytes: try printer.watchLine(
            network: step.status, power: power, observedAt: step.timestampMicroseconds,
            encoder: &encoder, sections: &sections))
      }
    } else {
      try printer.emit(network: result.finalStatus, power: power)
    }
  }
}
