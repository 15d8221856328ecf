import Foundation
import Logging
import OTel
import ServiceLifecycle

/// `backgrounder-otlp-export BATCH.json`: sends the runs of one telemetry batch as spans, then
/// the daemon's metrics it carries, to an OpenTelemetry Collector over OTLP/HTTP (swift-otel),
/// and exits 0 only when the collector accepted all of them (1: not delivered, the daemon keeps
/// the rows and retries; 2: bad input). The daemon starts it as a contained child process; it
/// is not meant to be run by hand.
@main
enum OTLPExport {
  static func main() async {
    let arguments = CommandLine.arguments
    guard arguments.count == 2 else {
      FileHandle.standardError.write(Data("usage: backgrounder-otlp-export BATCH.json\n".utf8))
      exit(2)
    }
    let batch: ExportBatch
    do {
      batch = try JSONDecoder().decode(
        ExportBatch.self, from: Data(contentsOf: URL(fileURLWithPath: arguments[1])))
    } catch {
      FileHandle.standardError.write(Data("cannot read \(arguments[1]): \(error)\n".utf8))
      exit(2)
    }
    do {
      let spans = ExportWatch()
      try await sendSpans(batch, watch: spans)
      guard spans.exported == batch.runs.count, spans.failures.isEmpty else {
        let failures = spans.failures.joined(separator: "; ")
        FileHandle.standardError.write(
          Data("exported \(spans.exported) of \(batch.runs.count) span(s): \(failures)\n".utf8))
        exit(1)
      }
      print("exported \(spans.exported) span(s) to \(batch.tracesURL)")
      let samples = MetricSamples(prometheusText: batch.metrics ?? "")
      if !samples.samples.isEmpty {
        let metrics = ExportWatch()
        try await sendMetrics(samples, of: batch, watch: metrics)
        guard metrics.metricExports > 0, metrics.failures.isEmpty else {
          let failures = metrics.failures.joined(separator: "; ")
          FileHandle.standardError.write(Data("metrics not exported: \(failures)\n".utf8))
          exit(1)
        }
        print("exported \(samples.samples.count) metric point(s) to \(batch.metricsURL)")
      }
      exit(0)
    } catch {
      FileHandle.standardError.write(Data("cannot export: \(error)\n".utf8))
    }
    exit(1)
  }

  /// How long one batch may take before it counts as not delivered.
  static let timeout: Duration = .seconds(20)

  /// The configuration both signals share: service, host, diagnostics into `watch`.
  private static func configuration(watch: ExportWatch) -> OTel.Configuration {
    var configuration = OTel.Configuration.default
    configuration.serviceName = "backgrounder"
    configuration.resourceAttributes["host.name"] =
      ProcessInfo.processInfo.hostName
    configuration.logs.enabled = false
    configuration.metrics.enabled = false
    configuration.traces.enabled = false
    configuration.diagnosticLogger = .custom(watch.logger)
    configuration.diagnosticLogLevel = .debug
    return configuration
  }

  private static func sendSpans(_ batch: ExportBatch, watch: ExportWatch) async throws {
    var configuration = configuration(watch: watch)
    configuration.traces.enabled = true
    configuration.traces.exporter = .otlp
    configuration.traces.otlpExporter.protocol = .httpProtobuf
    configuration.traces.otlpExporter.endpoint = batch.tracesURL
    configuration.traces.otlpExporter.headers = headers(batch)
    configuration.traces.otlpExporter.timeout = timeout
    configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(50)
    configuration.traces.batchSpanProcessor.exportTimeout = timeout
    configuration.traces.batchSpanProcessor.maxQueueSize = max(batch.runs.count, 1)
    let backend = try OTel.makeTracingBackend(configuration: configuration)
    let group = ServiceGroup(
      configuration: .init(services: [backend.service], logger: Logger(label: "otlp-export")))
    try await withThrowingTaskGroup { tasks in
      tasks.addTask { try await group.run() }
      RunSpans.record(batch, with: backend.factory)
      let clock = ContinuousClock()
      let deadline = clock.now.advanced(by: timeout + .seconds(5))
      while watch.exported < batch.runs.count, watch.failures.isEmpty, clock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
      }
      await group.triggerGracefulShutdown()
      try await tasks.waitForAll()
    }
  }

  /// Records `samples` in a metrics backend whose periodic reader never fires on its own, and
  /// shuts it down at once: its final read exports them in one request.
  private static func sendMetrics(
    _ samples: MetricSamples, of batch: ExportBatch, watch: ExportWatch
  ) async throws {
    var configuration = configuration(watch: watch)
    configuration.metrics.enabled = true
    configuration.metrics.exporter = .otlp
    configuration.metrics.exportInterval = .seconds(3600)
    configuration.metrics.exportTimeout = timeout
    configuration.metrics.otlpExporter.protocol = .httpProtobuf
    configuration.metrics.otlpExporter.endpoint = batch.metricsURL
    configuration.metrics.otlpExporter.headers = headers(batch)
    configuration.metrics.otlpExporter.timeout = timeout
    let backend = try OTel.makeMetricsBackend(configuration: configuration)
    samples.record(in: backend.factory)
    let group = ServiceGroup(
      configuration: .init(services: [backend.service], logger: Logger(label: "otlp-export")))
    try await withThrowingTaskGroup { tasks in
      tasks.addTask { try await group.run() }
      await group.triggerGracefulShutdown()
      try await tasks.waitForAll()
    }
  }

  private static func headers(_ batch: ExportBatch) -> [(String, String)] {
    batch.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }
}
