import Backgrounder
import Foundation
import Locking
import Logging
import SystemCalls

/// `[telemetry]`: puts every finished run into the store's bounded telemetry outbox and hands
/// the outbox to `backgrounder-otlp-export` (the `Telemetry/` package: libcurl, OTLP/HTTP)
/// whenever it holds rows and the network meets `telemetry-network`. A delivered batch is
/// removed from the store; after a failed one nothing is sent until its backoff has passed
/// (30 s doubling to 1 h, or the collector's `Retry-After` when longer, at most a day) — not at
/// a run's end, not when the network comes back, not after a restart: the deadline is kept in
/// a file next to the store (``backoffPath``). Each batch carries the daemon's metrics as they
/// are when it is sent (``MetricsFile/snapshot()``). With an empty outbox nothing is armed: an
/// idle daemon wakes for nothing.
final class TelemetryExport: Sendable {
  /// What one run of the exporter came to.
  enum Delivery: Equatable, Sendable {
    case delivered
    /// Not delivered; `retryAfter`: what the collector asked to wait, when it did.
    case failed(retryAfter: Duration?)
  }

  /// Runs the exporter on one batch file.
  typealias Send = @Sendable (_ batchFile: String) async -> Delivery

  /// How many rows one export sends at most.
  static let batchLimit = 512
  static let retryInitial: Duration = .seconds(30)
  static let retryLimit: Duration = .seconds(3600)
  /// The longest `Retry-After` honoured (a collector cannot stop telemetry for longer).
  static let retryAfterLimit: Duration = .seconds(86_400)

  private struct State {
    var conditions: [String: [String]] = [:]
    var started: [TaskId: (at: Date, waited: Double)] = [:]
    var failures = 0
    /// No export before this (a backoff); nil: none.
    var notBefore: Date?
    var retry: Task<Void, Never>?
  }

  private let settings: TelemetrySettings
  private let metrics: MetricsFile?
  private let waits: RunWaitFeed
  private let bytes: RunBytesFeed
  private let runtime: Backgrounder
  private let network: any NetworkConditionSource
  private let clock: any WallClock
  private let batchPath: String
  /// The backoff kept across restarts: `NOT-BEFORE FAILURES` (seconds since 1970, a count),
  /// written by the daemon.
  private let backoffPath: String
  private let send: Send
  private let logger: Logger
  private let state = Lock(State())
  private let wake: AsyncStream<Void>.Continuation
  private let wakes: AsyncStream<Void>

  init(
    settings: TelemetrySettings, runtime: Backgrounder, network: any NetworkConditionSource,
    clock: any WallClock, batchPath: String, metrics: MetricsFile?, waits: RunWaitFeed,
    logger: Logger, bytes: RunBytesFeed = RunBytesFeed(), send: @escaping Send
  ) {
    self.settings = settings
    self.bytes = bytes
    self.metrics = metrics
    self.waits = waits
    self.runtime = runtime
    self.network = network
    self.clock = clock
    self.batchPath = batchPath
    backoffPath = batchPath + ".backoff"
    self.logger = logger
    self.send = send
    (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    if let (notBefore, failures) = Self.readBackoff(backoffPath) {
      state.withLock { state in
        state.notBefore = notBefore
        state.failures = failures
      }
    }
  }

  /// An armed retry holds no reference to the export (only its clock and wake-up), so an export
  /// dropped without ``run(events:)`` ending (a test driving ``exportPending()`` itself) would
  /// leave it asleep until its deadline, up to a day: it is cancelled here.
  deinit {
    state.withLock { $0.retry?.cancel() }
  }

  /// No export before this; nil: none pending.
  var notBefore: Date? { state.withLock { $0.notBefore } }

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
      // Rows left from before a restart (after the backoff a previous run left, if any).
      if let notBefore, notBefore > clock.now.date {
        armRetry(at: notBefore)
      } else {
        wake.yield()
      }
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
      var run = TelemetryRun(
        event, startedAt: started?.at, waitedSeconds: started?.waited, conditions: conditions)
    else {
      return
    }
    // Taken only at a run's end (a count is handed over before it, never after).
    run.count(bytes.take(job: job))
    do {
      try await runtime.appendTelemetry(try run.encoded(), capacity: settings.buffer)
      wake.yield()
    } catch {
      logger.warning(
        "cannot store a run for telemetry", metadata: ["job": "\(job)", "error": "\(error)"])
    }
  }

  /// Sends the outbox, batch by batch, while the network allows it and no backoff runs; stops
  /// at the first failure and arms the retry.
  func exportPending() async {
    while settings.network.isSatisfied(by: network.current) {
      if let notBefore, clock.now.date < notBefore { return }
      let batch: TelemetryBatch
      do {
        guard let next = try await runtime.telemetryBatch(limit: Self.batchLimit) else { return }
        batch = next
        try TelemetryBatchFile.write(
          batch, settings: settings, metrics: metrics?.snapshot(), to: batchPath,
          retryAfterFile: retryAfterPath)
      } catch {
        logger.warning("cannot prepare a telemetry batch", metadata: ["error": "\(error)"])
        return
      }
      unlink(retryAfterPath)
      let delivery = await send(batchPath)
      unlink(batchPath)
      guard delivery == .delivered else {
        if case .failed(let retryAfter) = delivery { scheduleRetry(retryAfter: retryAfter) }
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
        state.notBefore = nil
        state.retry?.cancel()
        state.retry = nil
      }
      unlink(backoffPath)
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

  /// Where the exporter writes the collector's `Retry-After` (the batch's `retryAfterFile`).
  var retryAfterPath: String { Self.retryAfterPath(batchPath: batchPath) }

  static func retryAfterPath(batchPath: String) -> String { batchPath + ".retry-after" }

  private func scheduleRetry(retryAfter: Duration?) {
    let now = clock.now.date
    let (delay, failures, notBefore) = state.withLock { state in
      state.failures += 1
      var delay = Self.retryDelay(failures: state.failures)
      if let retryAfter { delay = max(delay, min(retryAfter, Self.retryAfterLimit)) }
      let notBefore = now.addingTimeInterval(Double(delay.components.seconds))
      state.notBefore = notBefore
      return (delay, state.failures, notBefore)
    }
    logger.warning(
      "telemetry export failed; the runs stay in the store",
      metadata: [
        "retry in": "\(delay)", "failures": "\(failures)",
        "retry-after": "\(retryAfter.map { "\($0)" } ?? "none")",
      ])
    do {
      try Self.writeBackoff(notBefore: notBefore, failures: failures, to: backoffPath)
    } catch {
      logger.warning("cannot keep the telemetry backoff", metadata: ["error": "\(error)"])
    }
    armRetry(at: notBefore)
  }

  /// Wakes the export loop at `deadline`.
  private func armRetry(at deadline: Date) {
    state.withLock { state in
      state.retry?.cancel()
      state.retry = Task { [clock, wake] in
        do {
          try await clock.sleep(until: WallInstant(deadline), tolerance: nil)
          wake.yield()
        } catch {}
      }
    }
  }

  /// Writes the backoff file (mode 0600, created anew: never through a planted symlink).
  static func writeBackoff(notBefore: Date, failures: Int, to path: String) throws {
    let text = "\(notBefore.timeIntervalSince1970) \(failures)\n"
    unlink(path)
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw SystemCallError.current("open", path: path) }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
  }

  /// The backoff file's deadline and failure count; nil when it is missing or unreadable.
  static func readBackoff(_ path: String) -> (Date, Int)? {
    guard let (directory, name) = try? TrustedDirectory.open(containing: path, creating: false),
      let bytes = try? BoundedFile.read(name, in: directory, limit: 64)
    else { return nil }
    let fields = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isWhitespace)
    guard fields.count == 2, let seconds = Double(fields[0]), seconds.isFinite,
      let failures = Int(fields[1]), failures >= 0
    else { return nil }
    return (Date(timeIntervalSince1970: seconds), failures)
  }

  /// The `Retry-After` the exporter recorded at `path` (seconds), read and removed.
  static func takeRetryAfter(_ path: String) -> Duration? {
    defer { unlink(path) }
    guard let (directory, name) = try? TrustedDirectory.open(containing: path, creating: false),
      let bytes = try? BoundedFile.read(name, in: directory, limit: 32),
      let seconds = Int64(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }),
      seconds > 0
    else { return nil }
    return .seconds(seconds)
  }
}
