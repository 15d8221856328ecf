import Backgrounder
import Foundation

/// One finished run as a telemetry outbox row (JSON): what `backgrounder-otlp-export` turns
/// into a span. The field names are the exporter's input format (`Telemetry/`).
struct TelemetryRun: Codable, Equatable, Sendable {
  var job: String
  var attempt: Int
  /// `success`, `failure`, `retry` or `stopped`.
  var outcome: String
  var reason: String?
  /// The job's constraints (`network=unmetered`, `charging`, …).
  var conditions: [String]
  /// How long the job waited for its conditions before this run (since its previous run
  /// started), in seconds (``RunWaits``), when known.
  var waitedSeconds: Double?
  /// Start and end, in nanoseconds since 1970.
  var start: UInt64
  var end: UInt64
  /// The run's counted bytes (``RunNetworkBytes``), when they were: sent and received, the
  /// part of them on metered links, and how they were counted (`link`).
  var bytesSent: Int64?
  var bytesReceived: Int64?
  var meteredBytesSent: Int64?
  var meteredBytesReceived: Int64?
  var accounting: String?

  /// The run that `event` ended, given when it started and how long it waited before; nil for
  /// any other event.
  init?(_ event: MonitorEvent, startedAt: Date?, waitedSeconds: Double?, conditions: [String]) {
    guard let job = event.taskId else { return nil }
    let end = event.time
    switch event.kind {
    case .workCompleted(let attempt, let result, let runtime):
      self.attempt = attempt
      switch result {
      case .success: (outcome, reason) = ("success", nil)
      case .failure(let why): (outcome, reason) = ("failure", why)
      case .retry(let why): (outcome, reason) = ("retry", why)
      }
      let seconds =
        Double(runtime.components.seconds)
        + Double(runtime.components.attoseconds) / 1e18
      self.start = Self.nanoseconds(startedAt ?? end.addingTimeInterval(-seconds))
    case .workStopped(let attempt, let why):
      self.attempt = attempt
      (outcome, reason) = ("stopped", why.rawValue)
      self.start = Self.nanoseconds(startedAt ?? end)
    default:
      return nil
    }
    self.job = job.rawValue
    self.conditions = conditions
    self.waitedSeconds = waitedSeconds
    self.end = Self.nanoseconds(end)
  }

  /// Adds the run's counted bytes (nil: none were counted).
  mutating func count(_ bytes: RunNetworkBytes?) {
    guard let bytes else { return }
    bytesSent = bytes.sent
    bytesReceived = bytes.received
    meteredBytesSent = bytes.meteredSent
    meteredBytesReceived = bytes.meteredReceived
    accounting = bytes.accounting.rawValue
  }

  /// The row's JSON text.
  func encoded() throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(self), as: UTF8.self)
  }

  /// The conditions `job` runs under, as span attribute values.
  static func conditions(of job: JobDefinition) -> [String] {
    var conditions: [String] = []
    if job.network != .none { conditions.append("network=\(job.network.rawValue)") }
    if job.requiresCharging { conditions.append("charging") }
    if job.requiresBatteryNotLow { conditions.append("battery-not-low") }
    if let ssids = job.ssids { conditions.append("ssids=\(ssids.joined(separator: ","))") }
    if let interfaces = job.interfaces {
      conditions.append("interfaces=\(interfaces.joined(separator: ","))")
    }
    if let mount = job.requiresMount { conditions.append("requires-mount=\(mount)") }
    return conditions
  }

  private static func nanoseconds(_ date: Date) -> UInt64 {
    UInt64(max(date.timeIntervalSince1970, 0) * 1e9)
  }
}
