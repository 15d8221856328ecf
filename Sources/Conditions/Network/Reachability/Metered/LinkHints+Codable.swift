/// ``LinkHints`` as JSON, so that the daemon can hand its view of the network (NetworkManager's
/// answers, the probe's verdict, stale marks) to `status`: one truth per machine.
extension LinkHints: Codable {
  private enum CodingKeys: String, CodingKey {
    case networkManagerMetered, networkManagerConnectivity, networkManagerDeviceConnectivity
    case networkManagerChecksConnectivity, ssids, probeLink, probeConnectivity, sources
    case modemManagerRoaming
  }

  private struct SourceRecord: Codable {
    var state: String
    var since: Double?
  }

  /// Encodes every part.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(
      networkManagerMetered.mapValues(\.rawValue), forKey: .networkManagerMetered)
    try container.encode(networkManagerConnectivity.rawValue, forKey: .networkManagerConnectivity)
    try container.encode(
      networkManagerDeviceConnectivity.mapValues(\.rawValue),
      forKey: .networkManagerDeviceConnectivity)
    try container.encode(
      networkManagerChecksConnectivity, forKey: .networkManagerChecksConnectivity)
    try container.encode(ssids, forKey: .ssids)
    try container.encodeIfPresent(probe?.link, forKey: .probeLink)
    try container.encodeIfPresent(probe?.connectivity.rawValue, forKey: .probeConnectivity)
    var records: [String: SourceRecord] = [:]
    for (name, state) in sources {
      records[name.rawValue] = SourceRecord(state: state.name, since: state.since)
    }
    try container.encode(records, forKey: .sources)
    try container.encode(modemManagerRoaming, forKey: .modemManagerRoaming)
  }

  /// Decodes what ``encode(to:)`` wrote; unknown values are an error naming them.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init()
    func connectivity(_ text: String, _ key: CodingKeys) throws -> Connectivity {
      guard let value = Connectivity(rawValue: text) else {
        throw DecodingError.dataCorruptedError(
          forKey: key, in: container, debugDescription: "unknown connectivity \"\(text)\"")
      }
      return value
    }
    for (name, text) in try container.decode(
      [String: String].self, forKey: .networkManagerMetered)
    {
      guard let value = NetworkManagerMetered(rawValue: text) else {
        throw DecodingError.dataCorruptedError(
          forKey: .networkManagerMetered, in: container,
          debugDescription: "unknown metered value \"\(text)\"")
      }
      networkManagerMetered[name] = value
    }
    networkManagerConnectivity = try connectivity(
      container.decode(String.self, forKey: .networkManagerConnectivity),
      .networkManagerConnectivity)
    for (name, text) in try container.decode(
      [String: String].self, forKey: .networkManagerDeviceConnectivity)
    {
      networkManagerDeviceConnectivity[name] = try connectivity(
        text, .networkManagerDeviceConnectivity)
    }
    networkManagerChecksConnectivity = try container.decode(
      Bool.self, forKey: .networkManagerChecksConnectivity)
    ssids = try container.decode([String: String].self, forKey: .ssids)
    modemManagerRoaming =
      try container.decodeIfPresent([String: Bool].self, forKey: .modemManagerRoaming) ?? [:]
    if let link = try container.decodeIfPresent(String.self, forKey: .probeLink),
      let text = try container.decodeIfPresent(String.self, forKey: .probeConnectivity)
    {
      probe = (link, try connectivity(text, .probeConnectivity))
    }
    for (name, record) in try container.decode([String: SourceRecord].self, forKey: .sources) {
      guard let source = HintSourceName(rawValue: name),
        let state = HintSourceState(name: record.state, since: record.since)
      else {
        throw DecodingError.dataCorruptedError(
          forKey: .sources, in: container,
          debugDescription: "unknown hint source \"\(name)\" or state \"\(record.state)\"")
      }
      sources[source] = state
    }
  }
}

extension HintSourceState {
  /// The state named `name` (``name``), at `since` where the state has a time.
  init?(name: String, since: Double?) {
    switch name {
    case "answered": self = .answered
    case "absent": self = .absent
    default:
      guard let since else { return nil }
      switch name {
      case "waiting": self = .waiting(since: since)
      case "timedOut": self = .timedOut(since: since)
      case "stale": self = .stale(since: since)
      case "expired": self = .expired(since: since)
      default: return nil
      }
    }
  }
}
