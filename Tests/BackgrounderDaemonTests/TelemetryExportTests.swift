import Backgrounder
import BackgrounderTesting
import Foundation
import Locking
import Logging
import TestSupport
import Testing

@testable import BackgrounderDaemon

/// What the stand-in exporter saw (each batch file's bytes), and what it answers.
private final class StandInExporter: Sendable {
  private let state = Lock((files: [Data](), delivers: false, retryAfter: Duration?.none))
  var files: [Data] { state.withLock { $0.files } }
  func deliver(_ delivers: Bool) { state.withLock { $0.delivers = delivers } }
  /// Failures answer with this `Retry-After`.
  func retryAfter(_ retryAfter: Duration?) { state.withLock { $0.retryAfter = retryAfter } }

  func send(_ path: String) -> TelemetryExport.Delivery {
    let data = FileManager.default.contents(atPath: path) ?? Data()
    return state.withLock {
      $0.files.append(data)
      return $0.delivers ? .delivered : .failed(retryAfter: $0.retryAfter)
    }
  }

  /// The batch files, decoded.
  var batches: [[String: Any]] {
    files.map { (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any] ?? [:] }
  }
}

/// `[telemetry]`'s driver on a real store with a stand-in exporter: a finished run is stored,
/// sent when the network allows, deleted only once delivered, retried after the backoff on the
/// injected clock.
@Suite(.timeLimit(.minutes(3)))
struct TelemetryExportTests {
  private static let unmetered = NetworkConditions(isReachable: true)
  private static let metered = NetworkConditions(isReachable: true, isDataMetered: true)

  private func withExport(
    network: NetworkConditions, settings: (inout TelemetrySettings) -> Void = { _ in },
    metrics: MetricsFile? = nil, waits: RunWaitFeed = RunWaitFeed(),
    bytes: RunBytesFeed = RunBytesFeed(),
    _ body: (TelemetryExport, Backgrounder, StandInExporter, ManualClock, FakeNetworkSource)
      async throws
      -> Void
  ) async throws {
    try await withExport(
      network: network, settings: settings, metrics: metrics, waits: waits, bytes: bytes,
      again: { _, _, _ in }, body)
  }

  /// `again`: then a second export on the same store and files (a restart), the same clock.
  private func withExport(
    network: NetworkConditions, settings: (inout TelemetrySettings) -> Void = { _ in },
    metrics: MetricsFile? = nil, waits: RunWaitFeed = RunWaitFeed(),
    bytes: RunBytesFeed = RunBytesFeed(),
    again: (TelemetryExport, StandInExporter, ManualClock) async throws -> Void,
    _ body: (TelemetryExport, Backgrounder, StandInExporter, ManualClock, FakeNetworkSource)
      async throws
      -> Void
  ) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "bgtelemetry-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let runtime = Backgrounder(storePath: directory.appendingPathComponent("store.sqlite").path)
    try await runtime.start()
    var telemetry = TelemetrySettings(endpoint: "http://127.0.0.1:4318")
    telemetry.headers = ["authorization": "Bearer secret"]
    settings(&telemetry)
    let exporter = StandInExporter()
    let clock = ManualClock()
    let source = FakeNetworkSource(network)
    let export = TelemetryExport(
      settings: telemetry, runtime: runtime, network: source, clock: clock,
      batchPath: directory.appendingPathComponent("batch.json").path, metrics: metrics,
      waits: waits, logger: Logger(label: "test"), bytes: bytes, send: { exporter.send($0) })
    var configuration = DaemonConfiguration(sourcePath: "/test.toml")
    var job = JobDefinition(
      id: "dev.example.backup", command: ["true"], schedule: .once(delay: .zero))
    job.network = .unmetered
    job.requiresCharging = true
    configuration.jobs = [job]
    export.configure(configuration)
    try await body(export, runtime, exporter, clock, source)
    let restarted = StandInExporter()
    try await again(
      TelemetryExport(
        settings: telemetry, runtime: runtime, network: source, clock: clock,
        batchPath: directory.appendingPathComponent("batch.json").path, metrics: metrics,
        waits: waits, logger: Logger(label: "test"), send: { restarted.send($0) }),
      restarted, clock)
    await runtime.shutdown()
  }

  private func finishRun(_ export: TelemetryExport, attempt: Int, at seconds: Double) async throws {
    let job = try TaskId("dev.example.backup")
    let start = Date(timeIntervalSince1970: seconds)
    await export.record(
      MonitorEvent(taskId: job, time: start, kind: .workStarted(attempt: attempt)))
    await export.record(
      MonitorEvent(
        taskId: job, time: start.addingTimeInterval(2),
        kind: .workCompleted(
          attempt: attempt, result: .failure(reason: "exit status 3"), runtime: .seconds(2))))
  }

  @Test("a finished run is sent with its fields and deleted once the exporter delivered it")
  func deliveredRunDeleted() async throws {
    try await withExport(network: Self.unmetered) { export, runtime, exporter, _, _ in
      exporter.deliver(true)
      try await finishRun(export, attempt: 2, at: 1_700_000_000)
      await export.exportPending()
      let batch = try #require(exporter.batches.first)
      #expect(batch["endpoint"] as? String == "http://127.0.0.1:4318")
      #expect((batch["headers"] as? [String: String])?["authorization"] == "Bearer secret")
      let run = try #require((batch["runs"] as? [[String: Any]])?.first)
      #expect(run["job"] as? String == "dev.example.backup")
      #expect(run["attempt"] as? Int == 2)
      #expect(run["outcome"] as? String == "failure")
      #expect(run["reason"] as? String == "exit status 3")
      #expect(run["conditions"] as? [String] == ["network=unmetered", "charging"])
      #expect(run["start"] as? UInt64 == 1_700_000_000_000_000_000)
      #expect(run["end"] as? UInt64 == 1_700_000_002_000_000_000)
      #expect(run["waitedSeconds"] as? Double == 0)
      #expect(batch["metrics"] == nil)
      #expect(try await runtime.telemetryBatch(limit: 10) == nil)
    }
  }

  @Test("a run's counted bytes go out with it, and only with it")
  func runCarriesItsBytes() async throws {
    let bytes = RunBytesFeed()
    let job = try TaskId("dev.example.backup")
    try await withExport(network: Self.unmetered, bytes: bytes) { export, _, exporter, _, _ in
      exporter.deliver(true)
      let start = Date(timeIntervalSince1970: 1_700_000_000)
      await export.record(MonitorEvent(taskId: job, time: start, kind: .workStarted(attempt: 0)))
      // Counted before the run's end is reported (the worker hands it over, then returns); a
      // progress event in between does not take it.
      bytes.counted(
        job: job,
        bytes: RunNetworkBytes(
          sent: 612_345, received: 3_100, meteredSent: 600_000, meteredReceived: 3_000,
          accounting: .link))
      await export.record(
        MonitorEvent(
          taskId: job, time: start.addingTimeInterval(1),
          kind: .progress(fraction: 0.5, message: nil)))
      await export.record(
        MonitorEvent(
          taskId: job, time: start.addingTimeInterval(2),
          kind: .workCompleted(attempt: 0, result: .success, runtime: .seconds(2))))
      try await finishRun(export, attempt: 1, at: 1_700_000_010)
      await export.exportPending()
      let runs = try #require(exporter.batches.first?["runs"] as? [[String: Any]])
      try #require(runs.count == 2)
      #expect(runs[0]["bytesSent"] as? Int64 == 612_345)
      #expect(runs[0]["bytesReceived"] as? Int64 == 3_100)
      #expect(runs[0]["meteredBytesSent"] as? Int64 == 600_000)
      #expect(runs[0]["meteredBytesReceived"] as? Int64 == 3_000)
      #expect(runs[0]["accounting"] as? String == "link")
      for key in ["bytesSent", "bytesReceived", "meteredBytesSent", "accounting"] {
        #expect(runs[1][key] == nil, "the next run, not counted, has no \(key)")
      }
    }
  }

  @Test("a batch carries the metrics as they are when it is sent, and each run its waited time")
  func batchCarriesMetricsAndWaits() async throws {
    let metrics = MetricsFile(path: nil)
    let waits = RunWaitFeed()
    let job = try TaskId("dev.example.backup")
    try await withExport(network: Self.unmetered, metrics: metrics, waits: waits) {
      export, _, exporter, _, _ in
      exporter.deliver(true)
      // Held 90 s for an unmetered network, then 10 s of backoff (not a condition).
      let due = Date(timeIntervalSince1970: 1_699_999_900)
      waits.change(job: job, predicates: [.networkRequired(.unmetered)], at: due)
      waits.change(
        job: job, predicates: [.waitingForBackoff(until: due.addingTimeInterval(100))],
        at: due.addingTimeInterval(90))
      waits.change(job: job, predicates: [], at: due.addingTimeInterval(100))
      metrics.recordResult(job: job.rawValue, result: "failure")
      try await finishRun(export, attempt: 0, at: 1_700_000_000)
      await export.exportPending()
      let batch = try #require(exporter.batches.first)
      let run = try #require((batch["runs"] as? [[String: Any]])?.first)
      #expect(run["waitedSeconds"] as? Double == 90)
      let text = try #require(batch["metrics"] as? String)
      #expect(
        text.contains(#"backgrounder_results_total{job="dev.example.backup",result="failure"} 1"#),
        "\(text)")
    }
  }

  @Test("the waited time counts condition waits since the previous run started, not backoff")
  func runWaitsCountConditionsOnly() throws {
    let job = try TaskId("dev.example.backup")
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    var waits = RunWaits()
    #expect(waits.runStarted(job: job, at: t0) == 0)
    waits.change(job: job, predicates: [.requiresCharging], at: t0)
    // Another condition while still held: the same wait goes on.
    waits.change(job: job, predicates: [.requiresBatteryNotLow], at: t0.addingTimeInterval(20))
    waits.change(job: job, predicates: [], at: t0.addingTimeInterval(30))
    waits.change(
      job: job, predicates: [.waitingForEarliestBeginDate(at: t0.addingTimeInterval(50))],
      at: t0.addingTimeInterval(40))
    waits.change(
      job: job, predicates: [.mounted(path: "/mnt/backup")], at: t0.addingTimeInterval(50))
    // Still held when the run starts (an edge the runtime reports after): counted up to the start.
    #expect(waits.runStarted(job: job, at: t0.addingTimeInterval(55)) == 35)
    #expect(waits.runStarted(job: job, at: t0.addingTimeInterval(60)) == 0)
  }

  @Test("a batch not delivered stays in the store; the retry waits for the backoff on the clock")
  func failedBatchKeptAndRetried() async throws {
    try await withExport(network: Self.unmetered) { export, runtime, exporter, clock, _ in
      try await finishRun(export, attempt: 1, at: 1_700_000_000)
      let start = clock.now.date
      await export.exportPending()
      #expect(exporter.files.count == 1)
      #expect(export.failures == 1)
      #expect(try await runtime.telemetryBatch(limit: 10)?.payloads.count == 1)
      await clock.waitForSleepers(until: start.addingTimeInterval(30))
      // During the backoff nothing is sent.
      await export.exportPending()
      #expect(exporter.files.count == 1)
      // A second failure doubles the delay; the first timer is replaced.
      clock.advance(by: .seconds(30))
      await export.exportPending()
      #expect(try await runtime.telemetryBatch(limit: 10)?.payloads.count == 1)
      await clock.waitForSleepers(until: start.addingTimeInterval(90))
      try await waitUntil { clock.sleeperDeadlines == [start.addingTimeInterval(90)] }
      clock.advance(by: .seconds(60))
      try await waitUntil { clock.sleeperDeadlines.isEmpty }
      exporter.deliver(true)
      await export.exportPending()
      #expect(exporter.files.count == 3)
      #expect(export.failures == 0)
      #expect(try await runtime.telemetryBatch(limit: 10) == nil)
    }
  }

  @Test("run ends during a backoff start no export: 5 runs after a failure, 1 request")
  func runEndsDuringBackoffSendNothing() async throws {
    try await withExport(network: Self.unmetered) { export, _, exporter, _, _ in
      try await finishRun(export, attempt: 1, at: 1_700_000_000)
      await export.exportPending()
      for attempt in 2...6 {
        try await finishRun(export, attempt: attempt, at: 1_700_000_100)
        await export.exportPending()
      }
      #expect(exporter.files.count == 1)
      #expect(export.failures == 1)
    }
  }

  @Test("a collector's Retry-After longer than the backoff is waited out, across a restart")
  func retryAfterKeptAcrossRestart() async throws {
    var deadline = Date.distantPast
    try await withExport(
      network: Self.unmetered,
      again: { restarted, exporter, clock in
        // A new daemon on the same store: the deadline is read back, nothing sent before it.
        let kept = try #require(restarted.notBefore)
        #expect(abs(kept.timeIntervalSince(deadline)) < 0.001)
        exporter.deliver(true)
        await restarted.exportPending()
        #expect(exporter.files.isEmpty)
        clock.advance(to: WallInstant(deadline))
        await restarted.exportPending()
        #expect(exporter.files.count == 1)
        #expect(restarted.notBefore == nil)
      },
      { export, _, exporter, clock, _ in
        exporter.retryAfter(.seconds(3600))
        try await finishRun(export, attempt: 1, at: 1_700_000_000)
        await export.exportPending()
        deadline = clock.now.date.addingTimeInterval(3600)
        #expect(export.notBefore == deadline)
        clock.advance(by: .seconds(1800))  // past the 30 s backoff, within the Retry-After
        try await finishRun(export, attempt: 2, at: 1_700_000_100)
        await export.exportPending()
        #expect(exporter.files.count == 1)
      })
  }

  @Test("the export loop sends a stored run once it is running, and stops with its events")
  func loopSendsStoredRuns() async throws {
    try await withExport(network: Self.unmetered) { export, runtime, exporter, _, _ in
      exporter.deliver(true)
      try await finishRun(export, attempt: 1, at: 1_700_000_000)
      let (events, continuation) = AsyncStream<MonitorEvent>.makeStream()
      let running = Task { await export.run(events: events) }
      try await waitUntil { (try? await runtime.telemetryBatch(limit: 10)) == nil }
      #expect(exporter.files.count >= 1)
      continuation.finish()
      await running.value
    }
  }

  @Test("with telemetry-network = unmetered nothing is sent over a metered link")
  func meteredLinkHeld() async throws {
    try await withExport(network: Self.metered) { export, runtime, exporter, _, source in
      exporter.deliver(true)
      try await finishRun(export, attempt: 1, at: 1_700_000_000)
      await export.exportPending()
      #expect(exporter.batches.isEmpty)
      #expect(try await runtime.telemetryBatch(limit: 10)?.payloads.count == 1)
      source.set(Self.unmetered)
      await export.exportPending()
      #expect(exporter.batches.count == 1)
      #expect(try await runtime.telemetryBatch(limit: 10) == nil)
    }
  }

  @Test("telemetry-network = any sends over a metered link")
  func anyNetworkSendsOverMetered() async throws {
    let anyNetwork: (inout TelemetrySettings) -> Void = { $0.network = .any }
    try await withExport(network: Self.metered, settings: anyNetwork) {
      export, _, exporter, _, _ in
      exporter.deliver(true)
      try await finishRun(export, attempt: 1, at: 1_700_000_000)
      await export.exportPending()
      #expect(exporter.batches.count == 1)
    }
  }

  @Test("the retry delay doubles from 30 s up to 1 h")
  func retryDelays() {
    #expect(TelemetryExport.retryDelay(failures: 1) == .seconds(30))
    #expect(TelemetryExport.retryDelay(failures: 2) == .seconds(60))
    #expect(TelemetryExport.retryDelay(failures: 8) == .seconds(3600))
    #expect(TelemetryExport.retryDelay(failures: 100) == .seconds(3600))
  }

  @Test("[telemetry] keys: endpoint required, network checked, headers read")
  func configurationKeys() throws {
    let good = try ConfigurationLoader.parse(
      contents: Array(
        """
        [telemetry]
        otlp-endpoint = "https://collector.example:4318"
        headers = { authorization = "Bearer x" }
        telemetry-network = "any"
        buffer = 50
        """.utf8), path: "/t.toml")
    let settings = try #require(good.telemetry)
    #expect(settings.endpoint == "https://collector.example:4318")
    #expect(settings.headers == ["authorization": "Bearer x"])
    #expect(settings.network == .any)
    #expect(settings.buffer == 50)
    #expect(try ConfigurationLoader.parse(contents: [], path: "/t.toml").telemetry == nil)
    for bad in [
      "[telemetry]\notlp-endpoint = \"collector:4318\"",
      "[telemetry]\notlp-endpoint = \"http://c:4318\"\ntelemetry-network = \"wifi\"",
      "[telemetry]\ntelemetry-network = \"any\"",
    ] {
      #expect(throws: ConfigurationError.self) {
        try ConfigurationLoader.parse(contents: Array(bad.utf8), path: "/t.toml")
      }
    }
  }

  /// `text` parsed, and its `headers-file` read as the daemon and `doctor` read it.
  private func parse(_ text: String) throws -> DaemonConfiguration {
    var configuration = try ConfigurationLoader.parse(contents: Array(text.utf8), path: "/t.toml")
    configuration.telemetry = try configuration.telemetry?.loadingHeadersFile(
      configFile: configuration.sourcePath)
    return configuration
  }

  /// The configuration error of `text`, checked to name `key` and not to show `secret`.
  private func configurationError(_ text: String, key: String, hiding secret: String) {
    do {
      _ = try parse(text)
      Issue.record("accepted: \(text)")
    } catch let error as ConfigurationError {
      #expect(error.key == key, "\(error)")
      #expect(!error.description.contains(secret), "\(error)")
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test("headers checked when read: a bad name or a control character is an error, never shown")
  func headersChecked() throws {
    let https = "[telemetry]\notlp-endpoint = \"https://c:4318\"\n"
    configurationError(
      https + "headers = { \"x-api-key\" = \"sekrit\\r\\nX-Evil: 1\" }", key: "telemetry.headers",
      hiding: "sekrit")
    configurationError(
      https + "headers = { \"x-api-key\" = \"sekrit\\u0000en\" }",
      key: "telemetry.headers.x-api-key", hiding: "sekrit")  // a NUL: refused by the reader itself
    configurationError(
      https + "headers = { \"x-api-key: a\" = \"sekrit\" }", key: "telemetry.headers",
      hiding: "sekrit")
    configurationError(
      https + "headers = { \"x api\" = \"sekrit\" }", key: "telemetry.headers", hiding: "sekrit")
    #expect(try parse(https + "headers = { \"X-Api_Key\" = \"a b\\tc=\" }").telemetry != nil)
  }

  @Test("credentials in the endpoint are refused without being shown")
  func endpointCredentialsRefused() {
    configurationError(
      "[telemetry]\notlp-endpoint = \"https://user:hunter2@c:4318\"",
      key: "telemetry.otlp-endpoint", hiding: "hunter2")
  }

  @Test("an http:// endpoint with headers is refused unless allow-insecure = true")
  func insecureEndpointWithHeaders() throws {
    let text = "[telemetry]\notlp-endpoint = \"http://c:4318\"\nheaders = { a = \"tok\" }\n"
    configurationError(text, key: "telemetry.otlp-endpoint", hiding: "tok")
    #expect(try parse(text + "allow-insecure = true").telemetry?.allowInsecure == true)
    #expect(try parse("[telemetry]\notlp-endpoint = \"http://c:4318\"").telemetry != nil)
  }

  @Test("headers-file: name: value lines from a private file; a readable or bad one refused")
  func headersFile() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "bgheaders-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("headers").path
    let text =
      "[telemetry]\notlp-endpoint = \"https://c:4318\"\nheaders-file = \"\(file)\"\n"
    #expect(
      FileManager.default.createFile(
        atPath: file, contents: Data("# vendor\nx-api-key: tok-1\n\nX-Team:  a\n".utf8),
        attributes: [.posixPermissions: 0o600]))
    let settings = try #require(try parse(text).telemetry)
    #expect(settings.allHeaders == ["x-api-key": "tok-1", "X-Team": "a"])
    // (not in the config: no "[telemetry] headers" secret for doctor's readable-config check)
    #expect(settings.headers.isEmpty)
    configurationError(
      text + "headers = { X-TEAM = \"b\" }", key: "telemetry.headers-file", hiding: "tok-1")
    chmod(file, 0o644)
    configurationError(text, key: "telemetry.headers-file", hiding: "tok-1")
    #expect(
      FileManager.default.createFile(
        atPath: file, contents: Data("x-api-key: tok-1\r\u{1b}]52\n".utf8),
        attributes: [.posixPermissions: 0o600]))
    configurationError(text, key: "telemetry.headers-file", hiding: "tok-1")
    #expect(
      FileManager.default.createFile(
        atPath: file, contents: Data("tok-1\n".utf8), attributes: [.posixPermissions: 0o600]))
    configurationError(text, key: "telemetry.headers-file", hiding: "tok-1")
  }

  @Test("ca-file: an https endpoint's private CA, checked to exist")
  func caFile() throws {
    let https = "[telemetry]\notlp-endpoint = \"https://c:4318\"\n"
    #expect(try parse(https + "ca-file = \"/etc/hostname\"").telemetry?.caFile == "/etc/hostname")
    configurationError(
      https + "ca-file = \"/nonexistent/ca.pem\"", key: "telemetry.ca-file", hiding: "\0")
    configurationError(
      "[telemetry]\notlp-endpoint = \"http://c:4318\"\nca-file = \"/etc/hostname\"",
      key: "telemetry.ca-file", hiding: "\0")
  }

  private func waitUntil(_ condition: @Sendable () async -> Bool) async throws {
    if await eventually(every: .milliseconds(10), { await condition() ? true : nil }) == nil {
      Issue.record("condition not met within \(testEventTimeout)")
    }
  }
}
