import Backgrounder
import BackgrounderLinux
import ServiceLifecycle
import UnixSignals

extension Daemon {
  /// What the daemon's parts run, once the store is open and the jobs applied.
  struct Running: Sendable {
    let sources: LinuxConditionSources
    let runtime: Backgrounder
    let metrics: MetricsFile?
    let events: AsyncStream<MonitorEvent>
    /// Reports each event (the journal, the metrics).
    let reporter: EventReporter
    /// The events the alert watch looks again after (the newest only).
    let alertEvents: AsyncStream<MonitorEvent>
    let alerts: AlertWatch
    let telemetry: TelemetryExport?
    let telemetryEvents: AsyncStream<MonitorEvent>?
    let control: ControlServer
    /// Yields once the control socket listens.
    let listening: AsyncStream<Void>
    /// Yields when the store file was deleted or replaced.
    let storeReplaced: AsyncStream<StoreError>
    let storePath: String
    let jobCount: Int
    /// The `READY=1` notification.
    let ready: String
    let reloaded: Reloaded
    /// SIGHUPs forwarded by the entry point, nil when the daemon traps them itself.
    let forwardedReloads: AsyncStream<Void>?
  }

  /// The daemon's parts, in start order, for one `ServiceGroup`; each ends as its own policy
  /// says (``DaemonPart``).
  func parts(_ running: Running) -> [DaemonPart] {
    let (sources, runtime, metrics, events) =
      (running.sources, running.runtime, running.metrics, running.events)
    let (alertEvents, alerts, telemetry, telemetryEvents) =
      (running.alertEvents, running.alerts, running.telemetry, running.telemetryEvents)
    let (control, listening, storeReplaced, storePath) =
      (running.control, running.listening, running.storeReplaced, running.storePath)
    let (jobCount, ready, reloaded, forwardedReloads) =
      (running.jobCount, running.ready, running.reloaded, running.forwardedReloads)
    let (monitor, probe) = (sources.monitor, sources.powerProbe)
    let reporter = running.reporter
    // Shut down in reverse order: stop reloading and pinging, cancel running jobs (the control
    // socket still answers "shutting down"), close the socket, report the jobs' ends, then stop
    // watching network, power and clock.
    var parts: [DaemonPart] = []
    for part in sources.parts {
      let service = part.service
      switch part.ending {
      case .atShutdownSignal: parts.append(.untilShutdown(part.name) { try await service.run() })
      case .whenCancelled: parts.append(DaemonPart(part.name) { try await service.run() })
      }
    }
    if let metrics {
      parts.append(
        .untilShutdown("metrics publisher") {
          await Self.publish(monitor: monitor, probe: probe, metrics: metrics)
        })
    }
    parts += [
      DaemonPart("event reporter") {
        for await event in events { reporter.report(event) }
        try await gracefulShutdown()  // the stream ends when the runtime has shut down
      },
      DaemonPart("alert watch") {
        // At the shutdown signal, not after the runtime's: waiting hooks are cancelled and
        // running ones stopped while the jobs are.
        await withGracefulShutdownHandler {
          await alerts.run(events: alertEvents)
        } onGracefulShutdown: {
          alerts.stopHooks()
        }
        try await gracefulShutdown()  // the stream ends when the runtime has shut down
      },
      .untilShutdown("control socket") { try await control.run() },
    ]
    if let telemetry, let telemetryEvents {
      parts.append(
        DaemonPart("telemetry export") {
          await telemetry.run(events: telemetryEvents)
          try await gracefulShutdown()  // the stream ends when the runtime has shut down
        })
    }
    parts += [
      DaemonPart("runtime") { try await self.runUntilShutdown(runtime) },
      .untilShutdown("store file") {
        for await error in storeReplaced {
          self.logger.error(
            "the store file was deleted or replaced; stopping",
            metadata: ["store": "\(storePath)", "error": "\(error)"])
          throw error
        }
      },
    ]
    if notifier.watchdogInterval != nil {
      parts.append(
        .untilShutdown("watchdog") {
          let check = DispatchWatchdog { runtime.dispatchLoopProgress() }
          await self.notifier.runWatchdog(logger: self.logger, isHealthy: check.isHealthy)
        })
    }
    parts += [
      .untilShutdown("readiness") {
        // The store is open since runtime.start(); power is read when the probe is created.
        let unmet = await ReadinessCondition.firstUnmet([
          .firstElement(of: listening, "control socket listening"),
          // Unknown is not permission: READY=1 once every source answered or timed out.
          .firstElement(
            of: monitor.statusUpdates(), "network status with every source answered",
            where: \.isSettled),
        ])
        if let unmet {
          // A part failed or the daemon stops: that ends the group, not this part.
          self.logger.notice("not ready: no \(unmet)")
          return try await gracefulShutdown()
        }
        self.notifier.notify(ready)
        self.logger.info("daemon ready", metadata: ["jobs": "\(jobCount)"])
        self.options.afterReady?(runtime)
        try await gracefulShutdown()
      },
      .untilShutdown("config reload (SIGHUP)") {
        if let reloads = forwardedReloads {
          for await _ in reloads { await self.reload(reloaded) }
        } else {
          for await _ in await UnixSignalsSequence(trapping: .sighup) {
            await self.reload(reloaded)
          }
        }
      },
    ]
    return parts
  }
}
