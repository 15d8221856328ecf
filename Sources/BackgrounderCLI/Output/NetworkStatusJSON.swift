import Memo
import Reachability

extension JSONLineWriter {
  /// The `network` object of `status --json`, with the keys and values of
  /// `NetworkStatus.encode(to:)` in sorted order, without `JSONEncoder` (the `--watch` path).
  mutating func network(_ status: NetworkStatus) {
    network(status) { writer in
      writer.beginArray()
      for link in status.links { writer.link(link) }
      writer.endArray()
    }
  }

  fileprivate mutating func network(
    _ status: NetworkStatus, writeLinks: (inout JSONLineWriter) -> Void
  ) {
    beginObject()
    key("connectivity")
    string(status.connectivity.rawValue)
    key("connectivitySource")
    optionalString(status.connectivitySource?.rawValue)
    key("links")
    writeLinks(&self)
    key("malformedMessages")
    int(status.malformedMessages)
    key("metered")
    bool(status.isDataMetered)
    key("netlinkOverruns")
    int(status.netlinkOverruns)
    key("primary")
    optionalString(status.primary)
    key("reachable")
    bool(status.isReachable)
    if !status.sources.isEmpty {
      key("sources")
      beginArray()
      for name in status.sources.keys.sorted() { source(name, status.sources[name]!) }
      endArray()
    }
    if status.connectivityIsStale {
      key("stale")
      bool(true)
    }
    endObject()
  }

  /// One element of `sources`, as `HintSourceReport.encode(to:)` writes it, keys sorted.
  fileprivate mutating func source(_ name: HintSourceName, _ state: HintSourceState) {
    beginObject()
    key("name")
    string(name.rawValue)
    if let since = state.sinceText {
      key("since")
      string(since)
    }
    if state.isStale {
      key("stale")
      bool(true)
    }
    key("state")
    string(state.name)
    endObject()
  }

  /// One element of `links`, as `LinkStatus.encode(to:)` writes it, keys sorted.
  fileprivate mutating func link(_ link: LinkStatus) {
    beginObject()
    key("carrier")
    bool(link.hasCarrier)
    key("defaultRoute")
    bool(link.hasDefaultRoute)
    key("index")
    int(link.index)
    key("metered")
    bool(link.isMetered)
    key("meteredReason")
    string(link.meteredReason.code)
    key("name")
    string(link.name)
    if let roaming = link.isRoaming {
      key("roaming")
      bool(roaming)
    }
    if let ssid = link.ssid {
      key("ssid")
      string(ssid)
    }
    if link.isStale {
      key("stale")
      bool(true)
    }
    key("type")
    string(link.type.rawValue)
    key("up")
    bool(link.isUp)
    endObject()
  }
}

/// The JSON `network` objects of the last two `--watch` lines, and of their `links` arrays: a
/// change often goes back and forth between two states (a default route added and removed, a
/// link down and up), and the links themselves change far less often than the rest of the line.
struct NetworkJSONCache {
  private var networks = RecentValues<NetworkStatus, [UInt8]>()
  private var links = RecentValues<[LinkStatus], [UInt8]>()

  /// The JSON object of `status`.
  mutating func json(of status: NetworkStatus) -> [UInt8] {
    // The model hands out the very same status, and the very same links array, for a state it
    // met before: comparing those needs no element compared.
    if let known = networks.value(for: status) { return known }
    let linksJSON = linksJSON(of: status.links)
    var writer = JSONLineWriter()
    writer.network(status) { writer in writer.raw(linksJSON) }
    networks.insert(writer.bytes, for: status)
    return writer.bytes
  }

  private mutating func linksJSON(of list: [LinkStatus]) -> [UInt8] {
    if let known = links.value(where: { $0.sharesStorage(with: list) })
      ?? links.value(for: list)
    {
      return known
    }
    var writer = JSONLineWriter()
    writer.beginArray()
    for link in list { writer.link(link) }
    writer.endArray()
    links.insert(writer.bytes, for: list)
    return writer.bytes
  }
}

extension Array {
  /// Whether both arrays are the same storage (then they are equal, element for element).
  func sharesStorage(with other: [Element]) -> Bool {
    withUnsafeBufferPointer { mine in
      other.withUnsafeBufferPointer { theirs in
        mine.baseAddress == theirs.baseAddress && mine.count == theirs.count
      }
    }
  }
}
