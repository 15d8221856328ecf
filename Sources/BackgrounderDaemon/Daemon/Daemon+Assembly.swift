import Backgrounder
import BackgrounderLinux
import EventLoops
import Foundation
import ServiceLifecycle
import SystemCalls

/// The steps of ``Daemon/run(configuration:)`` that build one piece each.
extension Daemon {
  /// What carries out the runs: the containment, the command runner, and the metered budgets
  /// and byte counts each run is charged to. (The runs' logind locks are the sources'
  /// `inhibitor`.)
  struct Workers: Sendable {
    let containment: RunContainment
    let runner: CommandRunner
    let meteredBudgets: MeteredBudgetLedger
    /// Each run's bytes for the exporter (with `[telemetry]` only).
    let runBytes: RunBytesFeed?
    /// How runs' bytes are counted, for `status` and `doctor`.
    let runBytesChoice: RunBytesChoice
    /// The counting's health problems (bytes that went uncounted).
    let runBytesProblems: @Sendable () -> [HealthProblem]
  }

  /// Prepares the containment and the runner and registers the worker that runs the config's
  /// commands; the metered budgets are configured, not loaded yet (``start(_:budgets:)``).
  func workers(
    _ configuration: borrowing DaemonConfiguration, runtime: Backgrounder,
    sources: LinuxConditionSources, metrics: MetricsFile?, eventLoop: EventLoop
  ) async throws -> Workers {
    let containment = try await RunContainment.prepare(
      storePath: configuration.storePath, logger: logger)
    // Each run's output and end are watched on the daemon's loop.
    let runner = CommandRunner(
      gracePeriod: options.killGracePeriod, containment: containment, eventLoop: eventLoop,
      logger: logger)
    let meteredBudgets = MeteredBudgetLedger(
      runtime: runtime, clock: runtime.configuration.clock, zone: runtime.configuration.timeZone,
      logger: logger)
    meteredBudgets.configure(configuration)
    let runBytes = configuration.telemetry.map { _ in RunBytesFeed() }
    containment.shaping?.configure(configuration)
    // Every link the monitor treats as metered, primary or not.
    let meteredLinks: @Sendable () -> Set<UInt32> = { [monitor = sources.monitor] in
      Set(monitor.status.links.lazy.filter(\.isMetered).map { UInt32(clamping: $0.index) })
    }
    let (accounting, runBytesChoice) = RunNetworkCounting.accounting(
      for: containment, meteredLinks: meteredLinks, logger: logger)
    var networkBytes = RunNetworkCounting(
      accounting: accounting,
      ledger: meteredBudgets, metrics: metrics,
      logger: logger, clock: runtime.configuration.clock,
      network: { [network = sources.network] in network.current })
    networkBytes.counted = runBytes.map { $0.counted }
    networkBytes.meteredLinks = meteredLinks
    let onRelaxedRun: @Sendable (String) -> Void = { [logger] job in
      logger.info("run started under relaxed conditions (relax-after)", metadata: ["job": "\(job)"])
      metrics?.recordRelaxedRun(job: job)
    }
    // Read once: the daemon's environment does not change, and parsing it took 1.2 % of the
    // daemon's CPU per run (issue #35).
    let environment = ProcessInfo.processInfo.environment
    // Each run holds the logind locks of its `inhibit` from its confirmed start (a run that
    // gives its start back asks logind for nothing; released while it is paused).
    try runtime.registerFallback(
      sources.holdingInhibitors(from: .confirmedStart) { [networkBytes] _ in
        var worker = CommandWorker(
          runner: runner, daemonEnvironment: environment, onRelaxedRun: onRelaxedRun)
        worker.networkBytes = networkBytes
        return worker
      })
    return Workers(
      containment: containment, runner: runner,
      meteredBudgets: meteredBudgets, runBytes: runBytes, runBytesChoice: runBytesChoice,
      runBytesProblems: { accounting.problems() })
  }

  /// The OTLP export of `[telemetry]` (nil without it), configured.
  func telemetryExport(
    _ configuration: borrowing DaemonConfiguration, runtime: Backgrounder,
    sources: LinuxConditionSources, metrics: MetricsFile?, waits: RunWaitFeed, workers: Workers
  ) -> TelemetryExport? {
    guard let settings = configuration.telemetry else { return nil }
    let batchPath = configuration.storePath + ".telemetry.json"
    let telemetry = TelemetryExport(
      settings: settings, runtime: runtime, network: sources.network,
      clock: runtime.configuration.clock, batchPath: batchPath,
      metrics: metrics, waits: waits, logger: logger, bytes: workers.runBytes ?? RunBytesFeed(),
      send: TelemetryExporterProcess.send(
        runner: workers.runner, exporter: TelemetryExporterProcess.path(settings),
        retryAfterFile: TelemetryExport.retryAfterPath(batchPath: batchPath),
        logger: logger))
    telemetry.configure(configuration)
    return telemetry
  }

  /// Opens the store and starts dispatching; then loads the metered budgets' counts and lets
  /// the store's memory go while the daemon idles.
  func start(_ runtime: Backgrounder, budgets: MeteredBudgetLedger) async throws {
    do {
      try await runtime.start()
    } catch {
      throw DaemonPartFailure(part: "store", reason: "\(error)")
    }
    await budgets.load()
    HeapTuning.releaseStoreMemoryWhenIdle(of: runtime)
  }

  /// logind's sleep signals (runs stopped before a suspend, inhibited while they stop) and the
  /// wake alarms of `jobs`, both started on `eventLoop`.
  func sleepWatches(
    runtime: Backgrounder, sources: LinuxConditionSources, workers: Workers,
    eventLoop: EventLoop, jobs: [JobDefinition]
  ) throws(SystemCallError) -> (SystemSleepFollower, WakeAlarms) {
    let sleepWatch = try SystemSleepStops.watch(
      runtime: runtime, sources: sources, runner: workers.runner, logger: logger)
    let wakeAlarms = WakeAlarms(runtime: runtime, eventLoop: eventLoop, logger: logger)
    wakeAlarms.start()
    wakeAlarms.configure(jobs)
    return (sleepWatch, wakeAlarms)
  }

  /// The control socket, bound (a socket that cannot be used stops the daemon before it
  /// starts), and a stream that yields once it listens.
  func controlServer(
    path: String, eventLoop: EventLoop, runtime: Backgrounder, sources: LinuxConditionSources,
    workers: Workers, reloaded: Reloaded
  ) throws -> (ControlServer, listening: AsyncStream<Void>) {
    let (monitor, probe) = (sources.monitor, sources.powerProbe)
    // Read here: the control requests are answered on other threads.
    let networkNamespace = DaemonView.currentNetworkNamespace()
    // The daemon's view as `status` shows it: asked for, and pushed to watchers.
    let view: @Sendable () -> DaemonView? = { [networkNamespace] in
      var view = DaemonView(network: monitor.status, power: probe.status)
      view.networkNamespace = networkNamespace
      return view
    }
    let (alerts, restartNeeded, meteredBudgets) =
      (reloaded.alerts, reloaded.restartNeeded, workers.meteredBudgets)
    let shaping = workers.containment.shaping
    let runBytesProblems = workers.runBytesProblems
    let (listening, listened) = AsyncStream<Void>.makeStream()
    let control = ControlServer(
      path: path, logger: logger, eventLoop: eventLoop,
      onListening: {
        listened.yield()
        listened.finish()
      },
      changes: {
        TaskChanges.stream(of: runtime, network: monitor, power: probe, view: view)
      },
      handler: ControlHandler(
        runtime: runtime, jobs: reloaded.jobs,
        reload: { await self.reload(reloaded) },
        sourceProblems: {
          sources.healthProblems() + alerts.problems() + restartNeeded.problems
            + meteredBudgets.problems() + (shaping?.problems() ?? []) + runBytesProblems()
        },
        hints: { monitor.hints }, inhibitor: sources.inhibitor, wakeAlarms: reloaded.wakeAlarms,
        view: view, meteredBudget: { meteredBudgets.daemonReport() },
        runBytes: workers.runBytesChoice
      ).handle)
    do {
      try control.bindNow()
    } catch {
      throw DaemonPartFailure(part: "control socket", reason: "\(error)")
    }
    return (control, listening)
  }

  /// Runs `parts` in one `ServiceGroup` until a shutdown signal (returns) or a failing part
  /// (throws). With `reloads`, the entry point forwards the signals: they arrive through a pipe
  /// on `eventLoop`, SIGHUP is yielded to `reloads`, the shutdown signals shut the group down.
  func serve(
    _ parts: [DaemonPart], eventLoop: EventLoop, reloads: AsyncStream<Void>.Continuation?,
    reporter: EventReporter
  ) async throws {
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: parts.map(\.configuration),
        gracefulShutdownSignals: reloads == nil ? options.shutdownSignals : [],
        logger: logger))
    let signalWatch = try reloads.map { reloads in
      try SignalWatch(eventLoop: eventLoop) {
        [shutdownSignals = options.shutdownSignals] signal in
        if signal == .sighup {
          reloads.yield()
        } else if shutdownSignals.contains(signal) {
          Task { await group.triggerGracefulShutdown() }
        }
      }
    }
    defer { signalWatch?.stop() }
    do {
      try await group.run()
    } catch {
      notifier.notify("STATUS=failed: \(error)")
      logger.error("daemon stopped by a failure", metadata: ["error": "\(error)"])
      reporter.writeMetrics()
      throw error
    }
    reporter.writeMetrics()
  }
}
