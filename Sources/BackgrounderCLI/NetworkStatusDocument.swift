import Reachability

/// The JSON document `status --json` prints: `{"network": {...}}`, plus `observedAt` in
/// `--watch` lines. Later sections (power, tasks) become further optional fields.
struct StatusDocument: Encodable {
  /// RFC 3339 time with microseconds; only in `--watch` lines.
  var observedAt: String?
  /// The reachability section.
  var network: NetworkStatus

  private enum CodingKeys: String, CodingKey {
    case observedAt, network
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(observedAt, forKey: .observedAt)
    try container.encode(network, forKey: .network)
  }
}
