import Backgrounder
import Foundation
import Logging
import PowerSource
import Reachability
import ServiceLifecycle
import UnixSignals

/// `backgrounder run`: the daemon. Watches the network and power, runs the config's jobs through
/// the runtime, answers the control socket, reloads on SIGHUP, talks to systemd, and on graceful
/// shutdown stops dispatching and cancels running jobs (recorded as retry).
public final class Daemon: Service {
  /// What the daemon needs to start.
  public struct Options: Sendable {
    public var configPath: String
    public var sysfsRoot: String = "/sys"
    /// Overrides `[metrics] file`.
    public var metricsFile: String?
    /// Time between SIGTERM and SIGKILL for a cancelled command.
    public var killGracePeriod: Duration = .seconds(5)

    public init(configPath: String) {
      self.configPath = configPath
    }
  }

  /// Finished one-time jobs are kept this long, so that an unchanged `once` job is not run
  /// again after a restart or reload.
  static let finishedRetention: Duration = .seconds(10 * 365 * 86_400)

  private let options: Options
  private let logger: Logger
  private let notifier: SystemdNotifier

  public init(options: Options, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) {
    self.options = options
    self.logger = logger
    self.notifier = notifier
  }

  public func run() async throws {
    let configuration = try ConfigurationLoader.load(path: options.configPath)
    try FileManager.default.createDirectory(
      atPath: (configuration.storePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    guard let storeLock = try StoreLock(storePath: configuration.storePath) else {
      throw OperatorError("another backgrounder daemon is using \(configuration.storePath)")
    }
    let monitor = ReachabilityMonitor(
      configuration: configuration.reachabilityConfiguration(sysfsRoot: options.sysfsRoot),
      logger: logger)
    let probe = PowerProbe(sysfsRoot: options.sysfsRoot, logger: logger)
    let network = MonitoredNetwork(monitor)
    let runtime = Backgrounder(
      configuration: Backgrounder.Configuration(
        storePath: configuration.storePath, logger: logger, network: network,
        power: MonitoredPower(probe), concurrencyLimit: configuration.maxConcurrentJobs,
        finishedRetention: Self.finishedRetention))
    let runner = CommandRunner(gracePeriod: options.killGracePeriod, logger: logger)
    try runtime.registerFallback { _ in CommandWorker(runner: runner, network: network) }
    let metrics = (options.metricsFile ?? configuration.metricsFile).map(MetricsFile.init(path:))
    let reporter = EventReporter(logger: logger, metrics: metrics)
    let events = runtime.events()
    try await runtime.start()
    let jobs = JobSynchronizer(runtime: runtime, logger: logger)
    await jobs.apply(configuration)
    let control = ControlServer(
      path: configuration.controlSocketPath, logger: logger,
      handler: ControlHandler(
        runtime: runtime, jobs: jobs, reload: { await self.reload(jobs) }
      ).handle)

    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await monitor.run() }
      for hints in configuration.networkHintServices(monitor: monitor, logger: logger) {
        group.addTask { try await hints.run() }
      }
      group.addTask { try await probe.run() }
      group.addTask { try await control.run() }
      group.addTask { for await event in events { reporter.report(event) } }
      group.addTask { await self.notifier.runWatchdog() }
      group.addTask { await self.publish(monitor: monitor, probe: probe, metrics: metrics) }
      group.addTask {
        for await _ in await UnixSignalsSequence(trapping: .sighup) { await self.reload(jobs) }
      }
      notifier.notify(
        "READY=1\nSTATUS=\(configuration.jobs.count) job(s) from \(options.configPath)")
      logger.info("daemon ready", metadata: ["jobs": "\(configuration.jobs.count)"])
      try await gracefulShutdown()
      notifier.notify("STOPPING=1\nSTATUS=stopping: cancelling running jobs")
      logger.info("shutting down: cancelling running jobs")
      await runtime.shutdown()
      group.cancelAll()
    }
    reporter.writeMetrics()
    withExtendedLifetime(storeLock) {}
    logger.info("daemon stopped")
  }

  /// Re-reads the config file and applies it; a broken file is logged and changes nothing.
  private func reload(_ jobs: JobSynchronizer) async {
    do {
      let configuration = try ConfigurationLoader.load(path: options.configPath)
      await jobs.apply(configuration)
      notifier.notify("STATUS=reloaded: \(configuration.jobs.count) job(s)")
      logger.info("config reloaded", metadata: ["jobs": "\(configuration.jobs.count)"])
    } catch {
      notifier.notify("STATUS=reload failed: \(error)")
      logger.error(
        "config reload failed; keeping the previous jobs", metadata: ["error": "\(error)"])
    }
  }

  /// Keeps the metrics' network and power gauges current.
  private func publish(monitor: ReachabilityMonitor, probe: PowerProbe, metrics: MetricsFile?) async
  {
    guard let metrics else { return }
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await status in monitor.statusUpdates() {
          metrics.setNetwork(reachable: status.isReachable, metered: status.isDataMetered)
          try? metrics.write()
        }
      }
      group.addTask {
        for await status in probe.statusUpdates() {
          metrics.setPower(
            externalPower: status.externalPower, charging: status.charging,
            batteryPercent: status.batteryPercent)
          try? metrics.write()
        }
      }
    }
  }
}
