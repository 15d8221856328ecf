import Logging
import Synchronization

/// Counts what swift-otel's batch span processor reports through its diagnostic logger: the
/// spans of every exported batch, and every failed export. The exporter exits 0 only when
/// every span was reported exported.
final class ExportWatch: Sendable {
  private struct Counts {
    var exported = 0
    var failures: [String] = []
  }

  private let counts = Mutex(Counts())

  var exported: Int { counts.withLock { $0.exported } }
  var failures: [String] { counts.withLock { $0.failures } }

  fileprivate func record(_ message: String, metadata: Logger.Metadata, error: (any Error)?) {
    switch message {
    case "Exported batch.":
      let size = metadata["batch_size"].flatMap { Int("\($0)") } ?? 0
      counts.withLock { $0.exported += size }
    case "Failed to export batch.", "Force flush failed.":
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
