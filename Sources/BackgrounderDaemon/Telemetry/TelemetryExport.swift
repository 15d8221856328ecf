import Backgrounder
import Foundation
import Locking
import Logging

/// `[telemetry]`: puts every finished run into the store's bounded telemetry outbox and hands
/// the outbox to `backgrounder-otlp-export` (the `Telemetry/` package: swift-otel, OTLP/HTTP)
/// whenever it holds rows and the network meets `telemetry-network`. A delivered batch is
/// removed from the store; a failed one stays and is tried again after a backoff (30 s doubling
/// to 1 h), at the next run's end, or when the network comes back. Each batch carries the
/// daemon's metrics as they are when it is sent (``MetricsFile/snapshot()``). With an empty
/// outbox nothing is armed: an idle daemon wakes for nothing.
final class TelemetryExport: Sendable {
  /// Runs the exporter on one batch file; true when the collector accepted every row.
  typealias Send = @Sendable (_ batchFile: String) async -> Bool

  /// How many rows one export sends at most.
  static let batchLimit = 512
  static let retryInitial: Duration = .seconds(30)
  static let retryLimit: Duration = .seconds(3600)

  private struct State {
    var conditions: [String: [String]] = [:]
    var started: [TaskId: (at: Date, waited: Double)] = [:]
    var failures = 0
    var retry: Task<Void, Never>?
  }

  private let settings: TelemetrySettings
  private let metrics: MetricsFile?
  private let waits: RunWaitFeed
  private let runtime: Backgrounder
  private let network: any NetworkConditionSource
  private let clock: any WallClock
  private let batchPath: String
  private let send: Send
  private let logger: Logger
  private let state = Lock(State())
  private let wake: AsyncStream<Void>.Continuation
  private let wakes: AsyncStream<Void>

  init(
    settings: TelemetrySettings, runtime: Backgrounder, network: any NetworkConditionSource,
    clock: any WallClock, batchPath: String, metrics: MetricsFile?, waits: RunWaitFeed,
    logger: Logger, send: @escaping Send
  ) {
    self.settings = settings
    self.metrics = metrics
    self.waits = waits
    self.runtime = runtime
    self.network = network
    self.clock = clock
    self.batchPath = batchPath
    self.logger = logger
    self.send = send
    (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
  }

  /// How many exports failed in a row (0 after a delivered one).
  var failures: Int { state.withLock { $0.failures } }

  /// Takes the jobs' conditions (at start and on every reload), recorded with their runs.
  func configure(_ configuration: DaemonConfiguration) {
    let conditions = Dictionary(
      configuration.jobs.map { ($0.id, TelemetryRun.conditions(of: $0)) },
      uniquingKeysWith: { first, _ in first })
    state.withLock { $0.conditions = conditions }
  }

  /// Records the runs `events` report and exports them, until `events` ends.
  func run(events: some AsyncSequence<MonitorEvent, Never> & Sendable) async {
    await withDiscardingTaskGroup { group in
      group.addTask {
        for await event in events { await self.record(event) }
        self.wake.finish()
      }
      group.addTask {
        for await conditions in self.network.updates()
        where self.settings.network.isSatisfied(by: conditions) {
          self.wake.yield()
        }
      }
      // Rows left from before a restart.
      wake.yield()
      for await _ in wakes { await exportPending() }
      group.cancelAll()
      state.withLock { $0.retry?.cancel() }
    }
  }

  /// Puts the run `event` ended (if any) into the outbox.
  func record(_ event: MonitorEvent) async {
    guard let job = event.taskId else { return }
    if case .workStarted = event.kind {
      let waited = waits.runStarted(job: job, at: event.time)
      state.withLock { $0.started[job] = (event.time, waited) }
      return
    }
    let (started, conditions) = state.withLock {
      ($0.started.removeValue(forKey: job), $0.conditions[job.rawValue] ?? [])
    }
    guard
      let run = TelemetryRun(
        event, startedAt: started?.at, waitedSeconds: started?.waited, conditions: conditions)
    else {
      return
    }
    do {
      try await runtime.appendTelemetry(try run.encoded(), capacity: settings.buffer)
      wake.yield()
    } catch {
      logger.warning(
        "cannot store a run for telemetry", metadata: ["job": "\(job)", "error": "\(error)"])
    }
  }

  /// Sends the outbox, batch by batch, while the network allows it; stops at the first failure
  /// and arms the retry.
  func exportPending() async {
    while settings.network.isSatisfied(by: network.current) {
      let batch: TelemetryBatch
      do {
        guard let next = try await runtime.telemetryBatch(limit: Self.batchLimit) else { return }
        batch = next
        try TelemetryBatchFile.write(
          batch, settings: settings, metrics: metrics?.snapshot(), to: batchPath)
      } catch {
        logger.warning("cannot prepare a telemetry batch", metadata: ["error": "\(error)"])
        return
      }
      let delivered = await send(batchPath)
      unlink(batchPath)
      guard delivered else {
        scheduleRetry()
        return
      }
      do {
        try await runtime.acknowledgeTelemetry(batch)
      } catch {
        logger.warning("cannot remove exported telemetry rows", metadata: ["error": "\(error)"])
        return
      }
      state.withLock { state in
        state.failures = 0
        state.retry?.cancel()
        state.retry = nil
      }
      logger.info(
        "telemetry exported",
        metadata: ["runs": "\(batch.payloads.count)", "dropped": "\(batch.dropped)"])
    }
  }

  /// The delay before the `failures`-th retry: 30 s doubling, at most 1 h.
  static func retryDelay(failures: Int) -> Duration {
    let doublings = min(max(failures - 1, 0), 20)
    return min(retryInitial * (1 << doublings), retryLimit)
  }

  private func scheduleRetry() {
    state.withLock { state in
      state.failures += 1
      let delay = Self.retryDelay(failures: state.failures)
      logger.warning(
        "telemetry export failed; the runs stay in the store",
        metadata: ["retry in": "\(delay)", "failures": "\(state.failures)"])
      state.retry?.cancel()
      let deadline = clock.now.date.addingTimeInterval(Double(delay.components.seconds))
      state.retry = Task { [clock, wake] in
        do {
          try await clock.sleep(until: WallInstant(deadline), tolerance: nil)
          wake.yield()
        } catch {}
      }
    }
  }
}
