/// What the daemon hands the exporter: a JSON file (private to the daemon's user) with the
/// collector's address, its headers, the outbox rows to send and the daemon's metrics.
public struct ExportBatch: Sendable {
  /// One finished run of a job, as the daemon's telemetry outbox stores it.
  public struct Run: Sendable {
    public var job: String
    public var attempt: Int
    /// `success`, `failure`, `retry` or `stopped`.
    public var outcome: String
    public var reason: String?
    /// The run's constraints (`network=unmetered`, `charging`, …).
    public var conditions: [String]
    /// How long the run waited between being due and starting, in seconds.
    public var waitedSeconds: Double?
    /// Start and end, in nanoseconds since 1970.
    public var start: UInt64
    public var end: UInt64
    /// The run's counted bytes, when they were counted.
    public var network: Network?
  }

  /// A run's bytes as the daemon counted them (the outbox row's `bytesSent`, `bytesReceived`,
  /// `meteredBytesSent`, `meteredBytesReceived` and `accounting`).
  public struct Network: Sendable, Equatable {
    public var sent: Int64
    public var received: Int64
    /// Of those, sent and received on metered links.
    public var meteredSent: Int64
    public var meteredReceived: Int64
    /// How they were counted: `link` (the primary link's counters: approximate, other traffic
    /// on the link counts too) or `cgroup`.
    public var accounting: String

    public init(
      sent: Int64, received: Int64, meteredSent: Int64, meteredReceived: Int64,
      accounting: String
    ) {
      self.sent = sent
      self.received = received
      self.meteredSent = meteredSent
      self.meteredReceived = meteredReceived
      self.accounting = accounting
    }
  }

  /// The collector's OTLP/HTTP base address (`https://collector.example:4318`).
  public var endpoint: String
  public var headers: [String: String]
  /// `ca-file`: the CA bundle the collector's certificate is verified with, instead of the
  /// system store.
  public var caFile: String?
  /// Where the exporter writes the collector's `Retry-After` (seconds, decimal) when an export
  /// is refused with one; the daemon reads it and waits that long before the next export.
  public var retryAfterFile: String?
  /// Runs dropped from the full outbox (oldest first) since the last delivered batch.
  public var dropped: Int
  /// The daemon's metrics when the batch was written, in Prometheus text format.
  public var metrics: String?
  public var runs: [Run]

  /// Why a batch file could not be read.
  public struct FormatError: Error, CustomStringConvertible {
    public var description: String
  }

  /// Reads the batch file's JSON.
  public init(json bytes: [UInt8]) throws(FormatError) {
    let document: JSONValue
    do throws(JSONValue.SyntaxError) {
      document = try JSONValue(parsing: bytes)
    } catch {
      throw FormatError(description: error.description)
    }
    func missing(_ key: String) -> FormatError {
      FormatError(description: "missing or invalid \"\(key)\"")
    }
    guard let endpoint = document["endpoint"]?.string else { throw missing("endpoint") }
    self.endpoint = endpoint
    var headers: [String: String] = [:]
    for (name, value) in document["headers"]?.object ?? [:] {
      guard let text = value.string else { throw missing("headers") }
      headers[name] = text
    }
    self.headers = headers
    caFile = document["caFile"]?.string
    retryAfterFile = document["retryAfterFile"]?.string
    dropped = document["dropped"]?.int ?? 0
    metrics = document["metrics"]?.string
    var runs: [Run] = []
    for row in document["runs"]?.array ?? [] {
      guard let job = row["job"]?.string else { throw missing("runs[].job") }
      guard let attempt = row["attempt"]?.int else { throw missing("runs[].attempt") }
      guard let outcome = row["outcome"]?.string else { throw missing("runs[].outcome") }
      guard let start = row["start"]?.uint64, let end = row["end"]?.uint64 else {
        throw missing("runs[].start/end")
      }
      var network: Network?
      if let sent = row["bytesSent"]?.int, let received = row["bytesReceived"]?.int {
        guard let meteredSent = row["meteredBytesSent"]?.int,
          let meteredReceived = row["meteredBytesReceived"]?.int,
          let accounting = row["accounting"]?.string
        else {
          throw missing("runs[].meteredBytesSent/meteredBytesReceived/accounting")
        }
        network = Network(
          sent: Int64(sent), received: Int64(received), meteredSent: Int64(meteredSent),
          meteredReceived: Int64(meteredReceived), accounting: accounting)
      }
      runs.append(
        Run(
          job: job, attempt: attempt, outcome: outcome, reason: row["reason"]?.string,
          conditions: (row["conditions"]?.array ?? []).compactMap(\.string),
          waitedSeconds: row["waitedSeconds"]?.double, start: start, end: end, network: network))
    }
    self.runs = runs
  }

  /// The traces URL of ``endpoint`` (`…/v1/traces`).
  public var tracesURL: String { url("traces") }
  /// The metrics URL of ``endpoint`` (`…/v1/metrics`).
  public var metricsURL: String { url("metrics") }

  private func url(_ signal: String) -> String {
    (endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint) + "/v1/" + signal
  }

  /// The runs as `backgrounder.run` spans (each its own trace), with the job, attempt, outcome,
  /// reason, conditions and waited time as attributes, and for a run whose bytes were counted
  /// `backgrounder.network.bytes_sent`, `.bytes_received`, `.metered_bytes` (sent and received
  /// on metered links) and `.accounting`; ids from `random`.
  public func spans(using random: inout some RandomNumberGenerator) -> [OTLPRequests.Span] {
    runs.map { run in
      var attributes: [(String, AttributeValue)] = [
        ("backgrounder.job", .string(run.job)),
        ("backgrounder.attempt", .int(Int64(run.attempt))),
        ("backgrounder.outcome", .string(run.outcome)),
      ]
      if let reason = run.reason { attributes.append(("backgrounder.reason", .string(reason))) }
      attributes.append(("backgrounder.conditions", .strings(run.conditions)))
      if let waited = run.waitedSeconds {
        attributes.append(("backgrounder.waited_seconds", .double(waited)))
      }
      if let network = run.network {
        attributes += [
          ("backgrounder.network.bytes_sent", .int(network.sent)),
          ("backgrounder.network.bytes_received", .int(network.received)),
          (
            "backgrounder.network.metered_bytes",
            .int(network.meteredSent + network.meteredReceived)
          ),
          ("backgrounder.network.accounting", .string(network.accounting)),
        ]
      }
      attributes.append(("backgrounder.telemetry.dropped", .int(Int64(dropped))))
      let ok = run.outcome == "success"
      return OTLPRequests.Span(
        traceID: Self.randomID(16, using: &random), spanID: Self.randomID(8, using: &random),
        name: "backgrounder.run", start: run.start, end: max(run.end, run.start),
        attributes: attributes, ok: ok, statusMessage: ok ? nil : (run.reason ?? run.outcome))
    }
  }

  /// `count` random bytes, never all zero (an invalid id in OTLP).
  private static func randomID(_ count: Int, using random: inout some RandomNumberGenerator)
    -> [UInt8]
  {
    while true {
      let id = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
      if id.contains(where: { $0 != 0 }) { return id }
    }
  }
}

/// The endpoint's parts the exporter checks and shows.
public enum EndpointText {
  /// True when the address carries credentials (`https://user:password@host`): refused.
  public static func hasCredentials(_ endpoint: String) -> Bool {
    guard let colon = endpoint.firstIndex(of: ":"), endpoint[colon...].hasPrefix("://") else {
      return false
    }
    let authority = endpoint[endpoint.index(colon, offsetBy: 3)...].prefix {
      $0 != "/" && $0 != "?" && $0 != "#"
    }
    return authority.contains("@")
  }

  /// `url` without its query and fragment (which may carry a token): what a message shows.
  public static func redacted(_ url: String) -> String {
    guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
    return String(url[..<cut]) + "?…"
  }
}
