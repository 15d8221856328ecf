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

  /// ``network(_:)`` with the `links` array taken from `links` when it holds it.
  mutating func network(_ status: NetworkStatus, links: inout LinkJSONCache) {
    network(status) { writer in writer.raw(links.json(of: status.links)) }
  }

  private mutating func network(
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
    if let ssid = link.ssid {
      key("ssid")
      string(ssid)
    }
    key("type")
    string(link.type.rawValue)
    key("up")
    bool(link.isUp)
    endObject()
  }
}

/// The JSON `links` arrays of the last two `--watch` lines: a change often goes back and
/// forth between two states (a default route added and removed, a link down and up), and the
/// links themselves change far less often than the rest of the line.
struct LinkJSONCache {
  /// Newest first.
  private var recent: [(links: [LinkStatus], json: [UInt8])] = []

  /// The JSON array of `links`.
  mutating func json(of links: [LinkStatus]) -> [UInt8] {
    // The model hands out the very same array for a link list it made before: look for that
    // first, it needs no element compared.
    if let hit = recent.firstIndex(where: { $0.links.sharesStorage(with: links) })
      ?? recent.firstIndex(where: { $0.links == links })
    {
      if hit != 0 { recent.swapAt(0, hit) }
      return recent[0].json
    }
    var writer = JSONLineWriter()
    writer.beginArray()
    for link in links { writer.link(link) }
    writer.endArray()
    recent.insert((links, writer.bytes), at: 0)
    if recent.count > 2 { recent.removeLast() }
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
