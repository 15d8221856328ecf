import Reachability

extension JSONLineWriter {
  /// The `network` object of `status --json`, with the keys and values of
  /// `NetworkStatus.encode(to:)` in sorted order, without `JSONEncoder` (the `--watch` path).
  mutating func network(_ status: NetworkStatus) {
    beginObject()
    key("connectivity")
    string(status.connectivity.rawValue)
    key("connectivitySource")
    optionalString(status.connectivitySource?.rawValue)
    key("links")
    beginArray()
    for link in status.links { self.link(link) }
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
  private mutating func link(_ link: LinkStatus) {
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
