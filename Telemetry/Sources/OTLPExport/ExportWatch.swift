import Logging
import Synchronization

/// Counts what swift-otel reports through its diagnostic logger: the spans of every exported
/// batch, the metric exports begun, and every failed export. The exporter exits 0 only when
/// every span was reported exported and the metrics were sent without a failure.
final class ExportWatch: Sendable {
  private struct Counts {
    var exported = 0
    var metricExports = 0
    var failures: [String] = []
  }

  private let counts = Mutex(Counts())

  var exported: Int { counts.withLock { $0.exported } }
  /// How many metric exports (of at least one metric) were begun.
  var metricExports: Int { counts.withLock { $0.metricExports } }
  var failures: [String] { counts.withLock { $0.failures } }

  fileprivate func record(_ message: String, metadata: Logger.Metadata, error: (any Error)?) {
    switch message {
    case "Exported batch.":
      let size = metadata["batch_size"].flatMap { Int("\($0)") } ?? 0
      counts.withLock { $0.exported += size }
    case "Exporting metrics.":
      let count = metadata["count"].flatMap { Int("\($0)") } ?? 0
      if count > 0 { counts.withLock { $0.metricExports += 1 } }
    case "Failed to export batch.", "Force flush failed.", "Failed to export metrics.":
      let cause = error.map { "\($0)" } ?? metadata["error"].map { "\($0)" }
      let detail = cause.map { "\(message) \($0)" } ?? message
      counts.withLock { $0.failures.append(detail) }
    default:
      break
    }
  }

  /// A logger that feeds this watch.
  var logger: Logger {
    Logger(label: "backgrounder-otlp-export") { _ in Handler(watch: self) }
  }

  private struct Handler: LogHandler {
    let watch: ExportWatch
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let merged = metadata.merging(event.metadata ?? [:]) { $1 }
      watch.record(event.message.description, metadata: merged, error: event.error)
    }
  }
}
