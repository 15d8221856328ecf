import Backgrounder
import BackgrounderLinux
import EventLoops
import Foundation
import Logging
import PowerSource
import Reachability
import ServiceLifecycle
import SystemCalls
import UnixSignals

/// `backgrounder run`: the daemon. Watches the network, power and the wall clock, runs the
/// config's jobs through the runtime, answers the control socket, reloads on SIGHUP and talks to
/// systemd. Every long-running part is a `Service` in one `ServiceGroup`: a part that cannot
/// start or fails later stops the daemon with an error naming it. A graceful shutdown stops
/// dispatching and cancels running jobs (recorded as retry).
package final class Daemon: Service {
  /// What the daemon needs to start.
  package struct Options: Sendable {
    package var configPath: String
    package var sysfsRoot: String = "/sys"
    /// Overrides `[metrics] file`.
    package var metricsFile: String?
    /// Time between the stop signal and SIGKILL for a stopped command whose job has no
    /// `stop-timeout`.
    package var killGracePeriod: Duration = .seconds(10)
    /// Signals that start a graceful shutdown.
    package var shutdownSignals: [UnixSignal] = [.sigterm, .sigint]
    /// Injected by tests (`Tests/StallingDaemon`), not API: the runtime's
    /// ``Backgrounder/Configuration/dispatchLoopWillIterate``, and what runs right after
    /// `READY=1` is sent (given the runtime).
    package var dispatchLoopWillIterate: (@Sendable () async -> Void)?
    package var afterReady: (@Sendable (Backgrounder) -> Void)?

    package init(configPath: String) {
      self.configPath = configPath
    }
  }

  /// Finished one-time jobs are kept this long, so that an unchanged `once` job is not run
  /// again after a restart or reload.
  static let finishedRetention: Duration = .seconds(10 * 365 * 86_400)

  let options: Options
  let logger: Logger
  let notifier: SystemdNotifier

  package init(options: Options, logger: Logger, notifier: SystemdNotifier = SystemdNotifier()) {
    self.options = options
    self.logger = logger
    self.notifier = notifier
  }

  /// Makes SIGTERM, SIGINT and SIGHUP reach the daemon through a pipe on its event loop
  /// instead of Dispatch signal sources (whose thread would stay): call it once, on the main
  /// thread before any other thread exists, only in a process that runs the daemon.
  package static func forwardSignals() throws {
    try SignalWatch.forwardDaemonSignals()
  }

  /// The config at `path`, with the `[telemetry] headers-file` read (only the daemon and
  /// `doctor` read that secret).
  private static func loadConfiguration(_ path: String, loaded: consuming DaemonConfiguration?)
    throws -> DaemonConfiguration
  {
    var configuration = try loaded ?? ConfigurationLoader.load(path: path)
    configuration.telemetry = try configuration.telemetry?.loadingHeadersFile(
      configFile: configuration.sourcePath)
    return configuration
  }

  /// Starts the daemon and runs it until a shutdown signal (returns) or a failing part (throws
  /// a ``DaemonPartFailure``). Nothing is reported ready to systemd when starting fails.
  package func run() async throws {
    try await run(configuration: nil)
  }

  /// ``run()`` with the config at ``Options/configPath`` already read (`backgrounder run` reads
  /// it first, to fail fast with file, line and key): it is not read and checked twice (issue
  /// #35: reading a 10,000-job config is most of a restart's CPU).
  package func run(configuration loaded: consuming DaemonConfiguration?) async throws {
    let configuration = try Self.loadConfiguration(options.configPath, loaded: loaded)
    warnOfExposedSecrets(configuration)
    let storeLock = try await Self.lockStore(configuration.storePath)
    // The one thread for the low-traffic descriptors: the control socket, the clock timer,
    // the uevent socket.
    let eventLoop = try EventLoop(name: "bg-events")
    defer { eventLoop.stop() }
    // The live sources, wired as any embedding app wires them (one call); the hint sources
    // count as waiting from here on, so nothing that needs the network starts before they
    // answered, are known absent, or timed out.
    let sources = LinuxConditionSources(
      options: configuration.linuxSourceOptions(sysfsRoot: options.sysfsRoot),
      eventLoop: eventLoop, logger: logger)
    // A store deleted or replaced under the daemon: its writes are refused from the first one
    // after the change, and the daemon stops (exit ≠ 0) so that systemd starts it on the file
    // the path names now.
    let (storeReplaced, replacedContinuation) = AsyncStream<StoreError>.makeStream(
      bufferingPolicy: .bufferingOldest(1))
    let metricsPath = options.metricsFile ?? configuration.metricsFile
    // With [telemetry] and no [metrics] file the metrics are kept for the exporter only.
    let metrics =
      metricsPath != nil || configuration.telemetry != nil ? MetricsFile(path: metricsPath) : nil
    let runWaits = configuration.telemetry.map { _ in RunWaitFeed() }
    let runtime = Backgrounder(
      configuration: runtimeConfiguration(
        configuration, sources: sources, storeLock: storeLock, metrics: metrics,
        runWaits: runWaits, onStoreReplaced: { replacedContinuation.yield($0) }))
    let workers = try await workers(
      configuration, runtime: runtime, sources: sources, metrics: metrics, eventLoop: eventLoop)
    defer { workers.meteredBudgets.stop() }
    let events = runtime.events()
    let (alerts, alertEvents) = alertWatch(
      runtime: runtime, runner: workers.runner, metrics: metrics,
      desktopNotices: configuration.desktopNotices)
    let telemetry = runWaits.flatMap {
      telemetryExport(
        configuration, runtime: runtime, sources: sources, metrics: metrics, waits: $0,
        workers: workers)
    }
    let telemetryEvents = telemetry.map { _ in runtime.events() }
    try await start(runtime, budgets: workers.meteredBudgets)
    defer { HeapTuning.releaseStoreMemoryWhenIdle(of: nil) }
    // A first look before the config's jobs are applied: the failures stored by then are old,
    // any later one runs its on-failure hook.
    alerts.configure(configuration)
    await alerts.look()
    let jobs = JobSynchronizer(runtime: runtime, logger: logger)
    sources.destinations.watch(configuration.requiredDestinations)
    await jobs.apply(configuration)
    let (sleepWatch, wakeAlarms) = try sleepWatches(
      runtime: runtime, sources: sources, workers: workers, eventLoop: eventLoop,
      jobs: configuration.jobs)
    defer {
      sleepWatch.stop()
      wakeAlarms.stopSoon()
    }
    let reloaded = Reloaded(
      jobs: jobs, alerts: alerts, wakeAlarms: wakeAlarms, destinations: sources.destinations,
      telemetry: telemetry, restartNeeded: RestartNeeded(running: configuration),
      monitor: sources.monitor, meteredBudgets: workers.meteredBudgets,
      shaping: workers.containment.shaping)
    let (control, listening) = try controlServer(
      path: configuration.controlSocketPath, eventLoop: eventLoop, runtime: runtime,
      sources: sources, workers: workers, reloaded: reloaded)
    // What the long-lived parts below need of the config: capturing `configuration` itself
    // would keep every job's definition alive as long as the daemon runs.
    let (storePath, jobCount) = (configuration.storePath, configuration.jobs.count)
    // Nor may this frame keep it: a local's lifetime is not shortened across the awaits below
    // (with 1,000 jobs, 64 KB of job strings stayed resident in a release build, 540 KB of
    // definitions in a debug one).
    _ = consume configuration
    let reporter = EventReporter(logger: logger, metrics: metrics)
    // Signals through a pipe on the event loop when the entry point forwards them (no
    // libdispatch thread); else (the daemon inside a test process) Dispatch signal sources.
    let forwardedReloads =
      SignalWatch.isForwarded
      ? AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) : nil
    let running = Running(
      sources: sources, runtime: runtime, metrics: metrics, events: events, reporter: reporter,
      alertEvents: alertEvents, alerts: alerts, telemetry: telemetry,
      telemetryEvents: telemetryEvents, control: control, listening: listening,
      storeReplaced: storeReplaced, storePath: storePath, jobCount: jobCount,
      ready: "READY=1\nSTATUS=\(jobCount) job(s) from \(options.configPath)",
      reloaded: reloaded, forwardedReloads: forwardedReloads?.stream)
    try await serve(
      parts(running), eventLoop: eventLoop, reloads: forwardedReloads?.continuation,
      reporter: reporter)
    withExtendedLifetime(storeLock) {}
    logger.info("daemon stopped")
  }

  /// The runtime's configuration: the sources, the start splay, a grace period long enough
  /// for every job's stop-timeout, the store, and where wait changes are reported.
  private func runtimeConfiguration(
    _ configuration: borrowing DaemonConfiguration, sources: LinuxConditionSources,
    storeLock: StoreLock, metrics: MetricsFile?, runWaits: RunWaitFeed?,
    onStoreReplaced: @escaping @Sendable (StoreError) -> Void
  ) -> Backgrounder.Configuration {
    var runtimeConfiguration = Backgrounder.Configuration(
      storePath: configuration.storePath, logger: logger,
      concurrencyLimit: configuration.maxConcurrentJobs,
      finishedRetention: Self.finishedRetention)
    // Network, power, clock, mounts, destinations and the user's idle state (logind).
    sources.configure(&runtimeConfiguration)
    runtimeConfiguration.startSplay = StartSplayKey.runtimeSplay(configuration.startSplay)
    // A stopped run gets its job's stop-timeout, then SIGKILL and up to 5 s of reaping, before
    // the runtime gives up waiting for its worker (jobs added by a reload with a longer
    // stop-timeout are still killed in time, only their record lacks how they ended).
    let longestStop = configuration.jobs.compactMap(\.stopTimeout).max() ?? .zero
    runtimeConfiguration.gracePeriod = max(
      runtimeConfiguration.gracePeriod, max(options.killGracePeriod, longestStop) + .seconds(10))
    runtimeConfiguration.storeOpenPath = storeLock.storeOpenPath
    runtimeConfiguration.dispatchLoopWillIterate = options.dispatchLoopWillIterate
    runtimeConfiguration.onStoreReplaced = onStoreReplaced
    let waitMetrics = metrics.map(WaitMetrics.init(metrics:))
    if waitMetrics != nil || runWaits != nil {
      runtimeConfiguration.onWaitChange = { job, predicates, time in
        waitMetrics?.change(job: job, predicates: predicates, at: time)
        runWaits?.change(job: job, predicates: predicates, at: time)
      }
    }
    return runtimeConfiguration
  }

  /// Takes the store's start lock, waiting in `flock` while another daemon is starting (on a
  /// thread meant for blocking calls); throws when another daemon uses the store.
  private static func lockStore(_ storePath: String) async throws -> StoreLock {
    let lock: StoreLock?
    do {
      lock = try await SystemThread.runBlocking(
        name: "bg-store-lock", { try StoreLock(storePath: storePath) })
    } catch {
      // A store path refused by the whole-path rule (or a store that is not a regular file).
      throw DaemonPartFailure(part: "store", reason: "\(error)")
    }
    guard let lock else {
      throw OperatorError("another backgrounder daemon is using \(storePath)")
    }
    return lock
  }

  /// The alert watch (stale and failing jobs from the store, their hooks, metrics and notices)
  /// and the events it looks again after: those alone are buffered, and only the newest (it
  /// reads the store, so the last one is enough), instead of every event of a burst (thousands
  /// when 1,000 jobs are scheduled at start).
  private func alertWatch(
    runtime: Backgrounder, runner: CommandRunner, metrics: MetricsFile?, desktopNotices: Bool
  ) -> (AlertWatch, events: AsyncStream<MonitorEvent>) {
    let watch = AlertWatch(
      clock: runtime.configuration.clock,
      read: { only in
        (
          try await runtime.storedSuccesses(of: only),
          try await runtime.storedTasks(historyLimit: 0, includingInput: false, of: only)
        )
      },
      episodes: AlertWatch.EpisodeStore(
        load: { try await runtime.storedStaleEpisodes() },
        save: { try await runtime.recordStaleEpisodes($0) }),
      hooks: AlertHooks(runner: runner, logger: logger), metrics: metrics,
      notices: desktopNotices ? DesktopNotices(logger: logger) : nil, logger: logger,
      notify: { [notifier] in notifier.notify($0) })
    let events = runtime.events(
      bufferingPolicy: .bufferingNewest(1),
      where: { [watch] event in
        guard watch.isWatching, AlertWatch.mayChangeAlerts(event.kind) else { return false }
        // Noted here, as emitted: the stream keeps only the newest event.
        watch.noteChange(event.taskId)
        return true
      })
    return (watch, events)
  }

  /// Waits for the graceful shutdown, then stops dispatching and cancels running jobs
  /// (recorded as retry), flushes and closes the store.
  func runUntilShutdown(_ runtime: Backgrounder) async throws {
    try? await gracefulShutdown()
    notifier.notify("STOPPING=1\nSTATUS=stopping: cancelling running jobs")
    logger.info("shutting down: cancelling running jobs")
    await runtime.shutdown()
  }

  /// What a config reload applies the new file to.
  struct Reloaded: Sendable {
    let jobs: JobSynchronizer
    let alerts: AlertWatch
    let wakeAlarms: WakeAlarms
    let destinations: DestinationMonitor
    let telemetry: TelemetryExport?
    /// The `[network]` settings the sources run with, compared with each reloaded file.
    let restartNeeded: RestartNeeded
    /// Takes the reloaded metered overrides.
    let monitor: ReachabilityMonitor
    /// The metered budgets (`metered-budget` of `[network]` and of jobs).
    let meteredBudgets: MeteredBudgetLedger
    /// Takes the reloaded jobs' bandwidth caps.
    let shaping: RunShaping?
  }

  /// Logs a warning when the config file lets other users read the secrets it holds (what
  /// `doctor` reports as a problem), at start and at each reload.
  private func warnOfExposedSecrets(_ configuration: DaemonConfiguration) {
    if let exposed = ConfigSecrets.problem(path: options.configPath, configuration: configuration) {
      logger.warning("\(exposed)")
    }
  }

  /// Re-reads the config file and applies it; a broken file is logged and changes nothing.
  func reload(_ reloaded: Reloaded) async {
    do {
      let configuration = try ConfigurationLoader.load(path: options.configPath)
      warnOfExposedSecrets(configuration)
      reloaded.destinations.watch(configuration.requiredDestinations)
      await reloaded.jobs.apply(configuration)
      reloaded.wakeAlarms.configure(configuration.jobs)
      reloaded.alerts.configure(configuration)
      reloaded.telemetry?.configure(configuration)
      // The metered overrides apply at once: the jobs' gates and `status` agree again.
      let overrides = configuration.meteredOverrides
      let applied = RestartNeeded.liveChanges(from: reloaded.monitor.overrides, to: overrides)
      if !applied.isEmpty {
        reloaded.monitor.updateOverrides(overrides)
        logger.notice(
          "[network] \(applied.joined(separator: ", ")) applied at reload",
          metadata: ["keys": .array(applied.map { .string("network.\($0)") })])
      }
      reloaded.meteredBudgets.configure(configuration)
      reloaded.meteredBudgets.republish()
      reloaded.shaping?.configure(configuration)
      let unapplied = reloaded.restartNeeded.compare(with: configuration)
      if unapplied.isEmpty {
        notifier.notify("STATUS=reloaded: \(configuration.jobs.count) job(s)")
      } else {
        notifier.notify(
          "STATUS=reloaded: \(configuration.jobs.count) job(s); config changed, restart needed")
        logger.warning(
          "\(RestartNeeded.message(unapplied))",
          metadata: ["keys": .array(unapplied.map { .string("network.\($0)") })])
      }
      logger.info("config reloaded", metadata: ["jobs": "\(configuration.jobs.count)"])
    } catch {
      notifier.notify("STATUS=reload failed: \(error)")
      logger.error(
        "config reload failed; keeping the previous jobs", metadata: ["error": "\(error)"])
    }
  }

  /// Keeps the metrics' network and power gauges current.
  static func publish(
    monitor: ReachabilityMonitor, probe: PowerProbe, metrics: MetricsFile
  ) async {
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await status in monitor.statusUpdates() {
          metrics.setNetwork(reachable: status.isReachable, metered: status.isDataMetered)
          metrics.writeSoon { _ in }
        }
      }
      group.addTask {
        for await status in probe.statusUpdates() {
          metrics.setPower(
            externalPower: status.externalPower, charging: status.charging,
            batteryPercent: status.batteryPercent)
          metrics.writeSoon { _ in }
        }
      }
    }
  }
}
