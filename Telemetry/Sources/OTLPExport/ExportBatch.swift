import Foundation

/// What the daemon hands the exporter: a JSON file (private to the daemon's user) with the
/// collector's address, its headers, the outbox rows to send and the daemon's metrics.
struct ExportBatch: Decodable {
  /// One finished run of a job, as the daemon's telemetry outbox stores it.
  struct Run: Decodable {
    var job: String
    var attempt: Int
    /// `success`, `failure`, `retry` or `stopped`.
    var outcome: String
    var reason: String?
    /// The run's constraints (`network=unmetered`, `charging`, …).
    var conditions: [String]
    /// How long the run waited between being due and starting, in seconds.
    var waitedSeconds: Double?
    /// Start and end, in nanoseconds since 1970.
    var start: UInt64
    var end: UInt64
  }

  /// The collector's OTLP/HTTP base address (`https://collector.example:4318`).
  var endpoint: String
  var headers: [String: String]
  /// Runs dropped from the full outbox (oldest first) since the last delivered batch.
  var dropped: Int
  /// The daemon's metrics when the batch was written, in Prometheus text format.
  var metrics: String?
  var runs: [Run]

  /// The traces URL of ``endpoint`` (`…/v1/traces`).
  var tracesURL: String { url("traces") }
  /// The metrics URL of ``endpoint`` (`…/v1/metrics`).
  var metricsURL: String { url("metrics") }

  private func url(_ signal: String) -> String {
    (endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint) + "/v1/" + signal
  }
}
