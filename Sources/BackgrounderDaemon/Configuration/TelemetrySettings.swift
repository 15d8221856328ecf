import Backgrounder

/// `[telemetry]`: each finished run exported as an OpenTelemetry span over OTLP/HTTP to a
/// collector, by the separate `backgrounder-otlp-export` program (the `Telemetry/` package).
public struct TelemetrySettings: Sendable, Equatable {
  /// `otlp-endpoint = "https://collector.example:4318"`: the collector's OTLP/HTTP base address
  /// (spans go to `…/v1/traces`).
  public var endpoint: String
  /// `headers = { authorization = "…" }`: sent with every export.
  public var headers: [String: String] = [:]
  /// `telemetry-network = "unmetered"` (default) or `"any"`: the network exports wait for.
  public var network: NetworkRequirement = .unmetered
  /// `exporter = "/path"`: the exporter program; by default `backgrounder-otlp-export` next to
  /// the `backgrounder` executable.
  public var exporter: String?
  /// `buffer = 10000`: how many runs the store keeps while they cannot be sent; past it the
  /// oldest is dropped and counted.
  public var buffer = 10_000

  public init(endpoint: String) {
    self.endpoint = endpoint
  }
}

/// Reads and checks the `[telemetry]` table.
enum TelemetrySettingsReader {
  static let keys = ["otlp-endpoint", "headers", "telemetry-network", "exporter", "buffer"]

  /// The settings of `table`; nil when it sets no `otlp-endpoint` (telemetry is off).
  static func read(_ table: TableReader) throws(ConfigurationError) -> TelemetrySettings? {
    try table.rejectUnknownKeys(keys)
    guard let endpoint = try table.string("otlp-endpoint") else {
      for key in keys where table.contains(key) {
        throw table.error(key, "`\(key)` needs `otlp-endpoint` (telemetry is off without it)")
      }
      return nil
    }
    guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://"),
      !endpoint.contains(where: \.isWhitespace)
    else {
      throw table.error(
        "otlp-endpoint",
        "expected an http:// or https:// address such as \"https://collector.example:4318\", "
          + "got \"\(endpoint)\"")
    }
    var settings = TelemetrySettings(endpoint: endpoint)
    settings.headers = try table.stringTable("headers") ?? [:]
    if let network = try table.string("telemetry-network") {
      switch network {
      case "unmetered": settings.network = .unmetered
      case "any": settings.network = .any
      default:
        throw table.error(
          "telemetry-network", "expected \"unmetered\" or \"any\", got \"\(network)\"")
      }
    }
    if let exporter = try table.string("exporter") {
      guard exporter.hasPrefix("/") else {
        throw table.error("exporter", "expected an absolute path, got \"\(exporter)\"")
      }
      settings.exporter = exporter
    }
    settings.buffer = try table.int("buffer", in: 1...1_000_000) ?? settings.buffer
    return settings
  }
}
