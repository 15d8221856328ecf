import Foundation
import Logging
import OTel
import ServiceLifecycle

/// `backgrounder-otlp-export BATCH.json`: sends the runs of one telemetry batch as spans to an
/// OpenTelemetry Collector over OTLP/HTTP (swift-otel), and exits 0 only when the collector
/// accepted all of them (1: not delivered, the daemon keeps the rows and retries; 2: bad
/// input). The daemon starts it as a contained child process; it is not meant to be run by hand.
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
      let watch = ExportWatch()
      try await send(batch, watch: watch)
      let delivered = watch.exported
      if delivered == batch.runs.count, watch.failures.isEmpty {
        print("exported \(delivered) span(s) to \(batch.tracesURL)")
        exit(0)
      }
      let failures = watch.failures.joined(separator: "; ")
      FileHandle.standardError.write(
        Data("exported \(delivered) of \(batch.runs.count) span(s): \(failures)\n".utf8))
    } catch {
      FileHandle.standardError.write(Data("cannot export: \(error)\n".utf8))
    }
    exit(1)
  }

  /// How long one batch may take before it counts as not delivered.
  static let timeout: Duration = .seconds(20)

  private static func send(_ batch: ExportBatch, watch: ExportWatch) async throws {
    var configuration = OTel.Configuration.default
    configuration.serviceName = "backgrounder"
    configuration.resourceAttributes["host.name"] =
      ProcessInfo.processInfo.hostName
    configuration.logs.enabled = false
    configuration.metrics.enabled = false
    configuration.traces.exporter = .otlp
    configuration.traces.otlpExporter.protocol = .httpProtobuf
    configuration.traces.otlpExporter.endpoint = batch.tracesURL
    configuration.traces.otlpExporter.headers = batch.headers.sorted { $0.key < $1.key }
      .map { ($0.key, $0.value) }
    configuration.traces.otlpExporter.timeout = timeout
    configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(50)
    configuration.traces.batchSpanProcessor.exportTimeout = timeout
    configuration.traces.batchSpanProcessor.maxQueueSize = max(batch.runs.count, 1)
    configuration.diagnosticLogger = .custom(watch.logger)
    configuration.diagnosticLogLevel = .debug
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
}
