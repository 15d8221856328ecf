import Reachability

extension JSONLineWriter {
  /// The `network` object of `status --json`, with the keys and values of
  /// `NetworkStatus.encode(to:)` in sorted order, without `JSONEncoder` (the `--watch` path).
  mutating func network(_ status: NetworkStatus) {
    network(status) { writer, _, link in writer.link(link) }
  }

  /// ``network(_:)`` with each link's JSON taken from `links`, which keeps the bytes of the
  /// links of the previous line: a change usually leaves most links as they were.
  mutating func network(_ status: NetworkStatus, links: inout LinkJSONCache) {
    network(status) { writer, position, link in
      writer.raw(links.json(of: link, at: position))
    }
  }

  private mutating func network(
    _ status: NetworkStatus, writeLink: (inout JSONLineWriter, Int, LinkStatus) -> Void
  ) {
    beginObject()
    key("connectivity")
    string(status.connectivity.rawValue)
    key("connectivitySource")
    optionalString(status.connectivitySource?.rawValue)
    key("links")
    beginArray()
    for (position, link) in status.links.enumerated() { writeLink(&self, position, link) }
    endArray()
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

/// The JSON of each link of the last `--watch` line, by position, re-encoded only for a link
/// that changed.
struct LinkJSONCache {
  private var entries: [(link: LinkStatus, json: [UInt8])] = []

  /// The JSON object of `link`, the `position`th link of the line.
  mutating func json(of link: LinkStatus, at position: Int) -> [UInt8] {
    if position < entries.count, entries[position].link == link { return entries[position].json }
    var writer = JSONLineWriter()
    writer.link(link)
    let entry = (link: link, json: writer.bytes)
    if position < entries.count {
      entries[position] = entry
    } else {
      entries.append(entry)
    }
    return entry.json
  }
}
