import Foundation
import Locking
import Prometheus
import SystemCalls
import SystemPackage

/// Prometheus metrics for a fleet: runs, results, retries and deferrals per job, and the current
/// network and power state. Written in text format to a file for node_exporter's textfile
/// collector, replaced atomically (write to a fresh temporary file, then rename), and handed
/// to the OTLP exporter with every `[telemetry]` batch (``snapshot()``).
package final class MetricsFile: Sendable {
  private let registry = PrometheusCollectorRegistry()
  /// The textfile path; nil when the metrics are kept for `[telemetry]` only (no `[metrics]
  /// file`): ``write()`` then writes nothing.
  package let path: String?
  /// How long ``writeSoon(onError:)`` lets changes gather before it rewrites the file.
  package let writeDelay: Duration
  /// A write of ``writeSoon(onError:)`` is scheduled and has not started.
  private let writeScheduled = Lock(false)
  /// How many times the file was written (for tests).
  private let writes = Lock(0)

  package init(path: String?, writeDelay: Duration = .seconds(1)) {
    self.path = path
    self.writeDelay = writeDelay
  }

  /// How many times ``write()`` wrote the file.
  package var writeCount: Int { writes.withLock { $0 } }

  /// Rewrites the file once ``writeDelay`` has passed, with every change made until then: a
  /// burst of changes (each run changes several values: its start, its result, the last
  /// success) is one write, not one each. Each write is of every job's values, so with 1,000
  /// jobs a write per change tripled the daemon's CPU per run (issue #35). A change during the
  /// write schedules the next one. Node_exporter reads the file when scraped, seconds apart.
  package func writeSoon(onError: @escaping @Sendable (any Error) -> Void) {
    guard path != nil else { return }
    let schedule = writeScheduled.withLock { scheduled in
      defer { scheduled = true }
      return !scheduled
    }
    guard schedule else { return }
    let delay = writeDelay
    Task { [self] in
      if delay > .zero { try? await Task.sleep(for: delay) }
      writeScheduled.withLock { $0 = false }
      do { try write() } catch { onError(error) }
    }
  }

  /// The current values in Prometheus text format (what ``write()`` writes).
  package func snapshot() -> String {
    String(decoding: registry.emitToBuffer(), as: UTF8.self)
  }

  /// A run of `job` started.
  package func recordRunStarted(job: String) {
    counter("runs", "Runs started, per job.", [("job", job)]).increment()
  }

  /// A run of `job` started under relaxed conditions (`relax-after`).
  package func recordRelaxedRun(job: String) {
    counter(
      "relaxed_runs", "Runs started under relaxed conditions (relax-after), per job.",
      [("job", job)]
    ).increment()
  }

  /// A run of `job` ended with `result` (`success`, `failure` or `retry`).
  package func recordResult(job: String, result: String) {
    counter("results", "Run results, per job and result.", [("job", job), ("result", result)])
      .increment()
  }

  /// A retry of `job` was scheduled.
  package func recordRetry(job: String) {
    counter("retries", "Retries scheduled, per job.", [("job", job)]).increment()
  }

  /// An attempt of `job` was deferred for `reason` (network, charging, battery, ...).
  package func recordDeferral(job: String, reason: String) {
    counter(
      "deferrals", "Attempts deferred because a constraint was not met, per job and reason.",
      [("job", job), ("reason", reason)]
    ).increment()
  }

  /// A run of `job` was stopped for `reason` (a `StopReason` code:
  /// `networkLost`, `networkMetered`, `captivePortal`, `limitedConnectivity`,
  /// `chargerDisconnected`, `batteryLow`, …).
  package func recordStop(job: String, reason: String) {
    counter(
      "stops", "Runs stopped because a condition was lost (or on request), per job and reason.",
      [("job", job), ("reason", reason)]
    ).increment()
  }

  /// A run of `job` sent and received bytes: `backgrounder_job_network_bytes_total`, by
  /// `direction` (`sent`, `received`) and `metered` (`true`, `false`).
  package func recordNetworkBytes(
    job: String, sent: Int64, received: Int64, meteredSent: Int64, meteredReceived: Int64
  ) {
    let counts: [(String, String, Int64)] = [
      ("sent", "true", meteredSent), ("sent", "false", sent - meteredSent),
      ("received", "true", meteredReceived), ("received", "false", received - meteredReceived),
    ]
    for (direction, metered, bytes) in counts where bytes > 0 {
      counter(
        "job_network_bytes",
        "Bytes a job's runs sent and received, per job, direction and whether the link was metered.",
        [("job", job), ("direction", direction), ("metered", metered)]
      ).increment(by: bytes)
    }
  }

  /// A run of `job` was paused (`on-condition-lost = "pause"`) for `reason` (a `StopReason`
  /// code, as ``recordStop(job:reason:)`` has them).
  package func recordPause(job: String, reason: String) {
    counter(
      "pauses", "Runs paused because a condition was lost, per job and reason.",
      [("job", job), ("reason", reason)]
    ).increment()
  }

  /// `job` waited `seconds` for `condition` (`network`, `unmetered`, `charging`, `battery`,
  /// `window`, `mount`, `wifi`, …) while due.
  package func recordWaited(job: String, condition: String, seconds: Double) {
    counter(
      "job_waited_seconds",
      "Seconds a due job waited for a condition, per job and condition (counted when the wait ends or changes).",
      [("job", job), ("condition", condition)]
    ).increment(by: seconds)
  }

  /// The current network state.
  package func setNetwork(reachable: Bool, metered: Bool) {
    gauge("network_reachable", "1 when a usable default route exists.").set(to: reachable ? 1 : 0)
    gauge("network_metered", "1 when the primary link is metered.").set(to: metered ? 1 : 0)
  }

  /// The current power state; `batteryPercent` nil means no readable battery.
  package func setPower(externalPower: Bool, charging: Bool, batteryPercent: Double?) {
    gauge("power_external", "1 when on external power.").set(to: externalPower ? 1 : 0)
    gauge("power_charging", "1 when requiresCharging is satisfied.").set(to: charging ? 1 : 0)
    gauge("battery_percent", "Battery level; -1 when unknown.").set(to: batteryPercent ?? -1)
  }

  /// `job` last succeeded at `date` (the end of its run).
  package func setLastSuccess(job: String, at date: Date) {
    gauge(
      "job_last_success_timestamp_seconds", "When the job's last successful run ended (Unix time).",
      [("job", job)]
    ).set(to: date.timeIntervalSince1970)
  }

  /// Whether `job` (which has `alert-after`) is stale.
  package func setStale(job: String, stale: Bool) {
    gauge(
      "job_stale", "1 while the job has gone longer than its alert-after without a success.",
      [("job", job)]
    )
    .set(to: stale ? 1 : 0)
  }

  /// Writes the current values to `path` atomically, relative to its directory pinned under
  /// the whole-path rule (``TrustedDirectory``: a directory someone else could swap for a
  /// symlink is refused, naming its path, owner and mode): into a new file with an
  /// unpredictable name (`O_CREAT | O_EXCL | O_NOFOLLOW`, so a planted file or symlink is never
  /// followed or reused), then renamed over the name (a symlink there is replaced, not
  /// followed). Mode `0644`: the values are not secret and node_exporter usually runs as
  /// another user. No fsync: the file is rewritten on every change and readers only ever see
  /// a complete old or new version.
  package func write() throws {
    guard let path else { return }
    let (directory, name) = try TrustedDirectory.open(containing: path, creating: false)
    let temporary = ".\(name).\(UInt64.random(in: 0 ... .max))"
    let fd = try directory.openFile(temporary, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
    var closed = false
    defer {
      if !closed { close(fd) }
    }
    let temporaryPath = directory.display(temporary)
    do {
      guard fchmod(fd, 0o644) == 0 else {
        throw SystemCallError.current("chmod", path: temporaryPath)
      }
      do {
        _ = try FileDescriptor(rawValue: fd).writeAll(registry.emitToBuffer())
      } catch {
        throw SystemCallError("write", path: temporaryPath, errno: error as? Errno ?? .ioError)
      }
      closed = true
      guard close(fd) == 0 else { throw SystemCallError.current("write", path: temporaryPath) }
      guard renameat(directory.descriptor, temporary, directory.descriptor, name) == 0 else {
        throw SystemCallError.current("rename \(temporaryPath) to", path: path)
      }
      writes.withLock { $0 += 1 }
    } catch {
      unlinkat(directory.descriptor, temporary, 0)
      throw error
    }
  }

  private func counter(_ name: String, _ help: String, _ labels: [(String, String)]) -> Counter {
    registry.makeCounter(
      descriptor: MetricNameDescriptor(
        namespace: "backgrounder", metricName: name, unitName: "total", helpText: help),
      labels: labels)
  }

  private func gauge(_ name: String, _ help: String) -> Gauge {
    registry.makeGauge(
      descriptor: MetricNameDescriptor(
        namespace: "backgrounder", metricName: name, unitName: "", helpText: help))
  }

  private func gauge(_ name: String, _ help: String, _ labels: [(String, String)]) -> Gauge {
    registry.makeGauge(
      descriptor: MetricNameDescriptor(
        namespace: "backgrounder", metricName: name, unitName: "", helpText: help),
      labels: labels)
  }
}
