/// What the reachability monitor concluded about the network at one moment.
///
/// JSON: `{"reachable", "metered", "primary", "connectivity", "connectivitySource", "links":
/// [...], "malformedMessages", "netlinkOverruns"}`.
public struct NetworkStatus: Sendable, Equatable, Encodable {
  /// A usable default route exists (link up with carrier and a global address of its family).
  public var isReachable: Bool
  /// The primary link is metered. `false` when nothing is reachable.
  public var isDataMetered: Bool
  /// Name of the link carrying the lowest-metric usable default route.
  public var primary: String?
  /// Every known link, ordered by interface index.
  public var links: [LinkStatus]
  /// Netlink messages skipped because they were malformed, since the monitor started.
  public var malformedMessages: Int
  /// Netlink receive-buffer overruns (`ENOBUFS`) since the monitor started; after each, the
  /// monitor dumped everything again, so the status stays the kernel's.
  public var netlinkOverruns: Int
  /// Whether the internet really answers through the primary link (``Connectivity/unknown``
  /// when neither NetworkManager nor the probe said).
  public var connectivity: Connectivity
  /// Who decided ``connectivity``; `nil` while unknown.
  public var connectivitySource: ConnectivitySource?
  /// Where each hint source stands (NetworkManager, nl80211, the probe); empty when none is
  /// in use (a replay, a bare monitor).
  public var sources: [HintSourceName: HintSourceState] = [:]
  /// A connectivity source is configured or present: ``Connectivity/unknown`` then means "not
  /// known yet" rather than "trust the routes".
  public var expectsConnectivity = false

  /// The sources that should answer and have not yet, by name.
  public var waitingSources: [HintSourceName] {
    sources.filter { $0.value.isWaiting }.keys.sorted()
  }

  /// Every source answered or is definitively absent (or timed out): the status is the
  /// whole truth as far as it can be known.
  public var isSettled: Bool { !sources.values.contains { $0.isWaiting } }

  /// NetworkManager's answers are kept after it left the bus (stale).
  public var networkManagerIsStale: Bool { sources[.networkManager]?.isStale == true }

  /// Whether ``connectivity`` comes from a source that went away (stale).
  public var connectivityIsStale: Bool {
    connectivitySource == .networkManager && networkManagerIsStale
  }

  /// Creates a status.
  public init(
    isReachable: Bool, isDataMetered: Bool, primary: String?, links: [LinkStatus],
    malformedMessages: Int, connectivity: Connectivity = .unknown,
    connectivitySource: ConnectivitySource? = nil, netlinkOverruns: Int = 0
  ) {
    self.isReachable = isReachable
    self.isDataMetered = isDataMetered
    self.primary = primary
    self.links = links
    self.malformedMessages = malformedMessages
    self.connectivity = connectivity
    self.connectivitySource = connectivitySource
    self.netlinkOverruns = netlinkOverruns
  }

  /// Nothing known yet: unreachable, no links.
  public static let unknown = NetworkStatus(
    isReachable: false, isDataMetered: false, primary: nil, links: [], malformedMessages: 0)

  /// The link named ``primary``, if any.
  public var primaryLink: LinkStatus? { links.first { $0.name == primary } }

  private enum CodingKeys: String, CodingKey {
    case reachable, metered, primary, connectivity, connectivitySource, stale, links
    case malformedMessages, netlinkOverruns, sources
  }

  /// Encodes with the documented keys; `primary` is `null` when absent.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(isReachable, forKey: .reachable)
    try container.encode(isDataMetered, forKey: .metered)
    try container.encode(primary, forKey: .primary)
    try container.encode(connectivity, forKey: .connectivity)
    try container.encode(connectivitySource, forKey: .connectivitySource)
    if connectivityIsStale { try container.encode(true, forKey: .stale) }
    try container.encode(links, forKey: .links)
    try container.encode(malformedMessages, forKey: .malformedMessages)
    try container.encode(netlinkOverruns, forKey: .netlinkOverruns)
    if !sources.isEmpty {
      try container.encode(
        sources.keys.sorted().map { HintSourceReport(name: $0, state: sources[$0]!) },
        forKey: .sources)
    }
  }
}

/// One hint source in the status JSON: `{"name", "state", "since", "stale"}` (`since`, an ISO
/// 8601 UTC time, only for the states that have a time; `stale` only when true).
struct HintSourceReport: Encodable {
  var name: HintSourceName
  var state: HintSourceState

  private enum CodingKeys: String, CodingKey { case name, state, since, stale }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(state.name, forKey: .state)
    try container.encodeIfPresent(state.sinceText, forKey: .since)
    if state.isStale { try container.encode(true, forKey: .stale) }
  }
}

/// One network interface as the monitor sees it.
///
/// JSON: `{"name", "index", "type", "up", "carrier", "metered", "defaultRoute", "meteredReason"}`
/// plus `"ssid"` for an associated Wi-Fi link whose SSID is known.
public struct LinkStatus: Sendable, Equatable, Encodable {
  /// Interface name.
  public var name: String
  /// Interface index.
  public var index: Int
  /// What kind of link this is.
  public var type: LinkType
  /// `IFF_UP`.
  public var isUp: Bool
  /// `IFF_LOWER_UP`: carrier present.
  public var hasCarrier: Bool
  /// Whether traffic over this link is treated as metered.
  public var isMetered: Bool
  /// The link carries a usable default route.
  public var hasDefaultRoute: Bool
  /// Which signal decided ``isMetered``.
  public var meteredReason: MeteredReason
  /// The SSID of the network a Wi-Fi link is associated with (from nl80211), if known.
  public var ssid: String?
  /// ``meteredReason`` is the last answer of a source that went away (NetworkManager left the
  /// bus): JSON `"stale": true` beside it.
  public var isStale = false
  /// Whether the link is the bearer of a modem registered on a roaming network (ModemManager);
  /// `nil` when no modem ModemManager knows uses it. JSON `"roaming"`, only when known.
  public var isRoaming: Bool?

  /// Creates a link status.
  public init(
    name: String, index: Int, type: LinkType, isUp: Bool, hasCarrier: Bool, isMetered: Bool,
    hasDefaultRoute: Bool, meteredReason: MeteredReason, ssid: String? = nil
  ) {
    self.ssid = ssid
    self.name = name
    self.index = index
    self.type = type
    self.isUp = isUp
    self.hasCarrier = hasCarrier
    self.isMetered = isMetered
    self.hasDefaultRoute = hasDefaultRoute
    self.meteredReason = meteredReason
  }

  private enum CodingKeys: String, CodingKey {
    case name, index, type, up, carrier, metered, defaultRoute, meteredReason, stale, ssid
    case roaming
  }

  /// Encodes with the documented keys.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(index, forKey: .index)
    try container.encode(type, forKey: .type)
    try container.encode(isUp, forKey: .up)
    try container.encode(hasCarrier, forKey: .carrier)
    try container.encode(isMetered, forKey: .metered)
    try container.encode(hasDefaultRoute, forKey: .defaultRoute)
    try container.encode(meteredReason.code, forKey: .meteredReason)
    if isStale { try container.encode(true, forKey: .stale) }
    try container.encodeIfPresent(ssid, forKey: .ssid)
    try container.encodeIfPresent(isRoaming, forKey: .roaming)
  }
}

/// The kind of a network link, as reported in `links[].type`.
public enum LinkType: String, Sendable, Equatable, Encodable, CaseIterable {
  /// Wired Ethernet.
  case ethernet
  /// Wi-Fi.
  case wifi
  /// Cellular modem (wwan, raw-IP, PPP).
  case cellular
  /// USB tethering to a phone.
  case tethered
  /// Bluetooth PAN.
  case bluetooth
  /// VPN or IP tunnel (WireGuard, tun, GRE, ...).
  case tunnel
  /// Virtual link (veth, bridge, macvlan, vxlan, ...).
  case virtual
  /// Loopback.
  case loopback
  /// Anything else.
  case other
}
