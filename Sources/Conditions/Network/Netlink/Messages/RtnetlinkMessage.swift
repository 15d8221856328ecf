/// One rtnetlink message decoded into plain Swift values.
public struct RtnetlinkMessage: Sendable, Equatable {
  /// The message's netlink header.
  public var header: NetlinkHeader
  /// What the message says.
  public var payload: Payload

  /// Creates a message from a header and a payload.
  public init(header: NetlinkHeader, payload: Payload) {
    self.header = header
    self.payload = payload
  }

  /// The decoded body of an rtnetlink message.
  public enum Payload: Sendable, Equatable {
    /// `RTM_NEWLINK` / `RTM_DELLINK`.
    case link(LinkInfo, MessageAction)
    /// `RTM_NEWADDR` / `RTM_DELADDR`.
    case address(AddressInfo, MessageAction)
    /// `RTM_NEWROUTE` / `RTM_DELROUTE` of a default route (or a reply to a
    /// ``RouteLookupRequest``, whatever its destination).
    case route(RouteInfo, MessageAction)
    /// `RTM_NEWROUTE` / `RTM_DELROUTE` of a route to a specific prefix: only its fixed header
    /// was read (the monitor uses default routes only, and a FIB may hold 100,000 others).
    case nonDefaultRoute
    /// `RTM_NEWRULE` / `RTM_DELRULE`: a policy-routing rule.
    case rule(RuleInfo, MessageAction)
    /// `RTM_NEWNEXTHOP` / `RTM_DELNEXTHOP`: a nexthop object.
    case nexthop(NexthopInfo, MessageAction)
    /// A dump request (`RTM_GET*` with `NLM_F_DUMP`) this process sent; kept in captures so a
    /// replay knows where a dump starts.
    case dumpRequest(ObjectKind)
    /// `NLMSG_DONE`: the end of a dump.
    case done
    /// `NLMSG_ERROR`: `code` is a negative errno, or 0 for an acknowledgement.
    case error(code: Int32)
    /// `NLMSG_OVERRUN`.
    case overrun
    /// A well-formed message of a type this monitor does not use.
    case unrelated
  }
}

/// Whether a link, address or route message adds/changes (`RTM_NEW*`) or removes (`RTM_DEL*`).
public enum MessageAction: Sendable, Equatable {
  /// `RTM_NEW*`: the object appeared or changed.
  case new
  /// `RTM_DEL*`: the object disappeared.
  case delete
}

/// The kinds of rtnetlink objects the monitor dumps and follows, in the order it dumps them
/// (routes last, so the nexthops they name are known).
public enum ObjectKind: String, Sendable, Equatable, CaseIterable {
  /// Network interfaces (`RTM_GETLINK`).
  case link
  /// Interface addresses (`RTM_GETADDR`).
  case address
  /// Policy-routing rules (`RTM_GETRULE`).
  case rule
  /// Nexthop objects (`RTM_GETNEXTHOP`, Linux 5.3+).
  case nexthop
  /// Routes (`RTM_GETROUTE`).
  case route
}

/// A network interface as described by `RTM_NEWLINK` / `RTM_DELLINK`.
public struct LinkInfo: Sendable, Equatable {
  /// `ifi_family`; the kernel's own link messages use `AF_UNSPEC`, bridge and IPv6 extras not.
  public var family: UInt8
  /// Interface index.
  public var index: Int32
  /// Interface name (`IFLA_IFNAME`).
  public var name: String
  /// `ifi_flags` (`IFF_*`).
  public var flags: UInt32
  /// `ifi_type`: an ARPHRD value (see ``HardwareType``).
  public var hardwareType: UInt16
  /// `IFLA_INFO_KIND` (e.g. `veth`, `wireguard`, `tun`), when the link has one.
  public var kind: String?

  /// Creates a link description.
  public init(
    family: UInt8, index: Int32, name: String, flags: UInt32, hardwareType: UInt16,
    kind: String?
  ) {
    self.family = family
    self.index = index
    self.name = name
    self.flags = flags
    self.hardwareType = hardwareType
    self.kind = kind
  }

  /// `IFF_UP` is set.
  public var isUp: Bool { flags & NetlinkConstant.interfaceUp != 0 }
  /// `IFF_LOWER_UP` is set: the link has carrier.
  public var hasCarrier: Bool { flags & NetlinkConstant.interfaceLowerUp != 0 }
  /// `IFF_LOOPBACK` is set or the hardware type is `ARPHRD_LOOPBACK`.
  public var isLoopback: Bool {
    flags & NetlinkConstant.interfaceLoopback != 0 || hardwareType == HardwareType.loopback
  }
}

/// An interface address as described by `RTM_NEWADDR` / `RTM_DELADDR`.
public struct AddressInfo: Sendable, Equatable, Hashable {
  /// `AF_INET` or `AF_INET6`.
  public var family: UInt8
  /// Index of the interface carrying the address.
  public var interfaceIndex: Int32
  /// Prefix length.
  public var prefixLength: UInt8
  /// `RT_SCOPE_*`; 0 (universe) is a global address.
  public var scope: UInt8
  /// `IFA_F_*` flags (from `IFA_FLAGS` when present).
  public var flags: UInt32
  /// The local address bytes (4 or 16).
  public var address: [UInt8]

  /// Creates an address description.
  public init(
    family: UInt8, interfaceIndex: Int32, prefixLength: UInt8, scope: UInt8, flags: UInt32,
    address: [UInt8]
  ) {
    self.family = family
    self.interfaceIndex = interfaceIndex
    self.prefixLength = prefixLength
    self.scope = scope
    self.flags = flags
    self.address = address
  }

  /// Global scope and usable: not tentative, duplicate address detection did not fail.
  public var isUsableGlobal: Bool {
    scope == NetlinkConstant.scopeUniverse
      && flags & (NetlinkConstant.addressTentative | NetlinkConstant.addressDADFailed) == 0
  }
}

/// A route as described by `RTM_NEWROUTE` / `RTM_DELROUTE`.
public struct RouteInfo: Sendable, Equatable, Hashable {
  /// `AF_INET`, `AF_INET6`, or another rtnetlink family.
  public var family: UInt8
  /// Routing table (`RTA_TABLE`, or `rtm_table`).
  public var table: UInt32
  /// `rtm_type` (`RTN_UNICAST`, `RTN_LOCAL`, ...).
  public var type: UInt8
  /// `rtm_protocol` (`RTPROT_KERNEL`, `RTPROT_BOOT`, `RTPROT_DHCP`, ...).
  public var routingProtocol: UInt8
  /// Destination prefix length; 0 for a default route.
  public var destinationPrefixLength: UInt8
  /// Destination address bytes (empty when the route has no `RTA_DST`).
  public var destination: [UInt8]
  /// `RTA_PRIORITY`: the metric; lower wins.
  public var metric: UInt32
  /// Output interfaces: `RTA_OIF`, or each hop of `RTA_MULTIPATH` in order.
  public var interfaceIndices: [Int32]
  /// `RTA_NH_ID`: the nexthop object the route uses, if any.
  public var nexthopID: UInt32?
  /// `RTA_PREFSRC` bytes (empty when absent).
  public var preferredSource: [UInt8]
  /// `rtm_tos`: part of an IPv4 route's identity; a lookup without a TOS ignores routes with one.
  public var tos: UInt8 = 0
  /// `RTA_GATEWAY` bytes (or `RTA_VIA`'s address); empty without one, and for multipath routes.
  public var gateway: [UInt8] = []
  /// A hop has a gateway (`RTA_GATEWAY`, `RTA_VIA`, or several hops): an IPv6 route that may
  /// have equal-cost siblings.
  public var hasGateway = false
  /// Each hop's gateway (`RTA_GATEWAY` or `RTA_VIA` of its `struct rtnexthop`), in the order of
  /// ``interfaceIndices``, for a multipath route; empty otherwise (see ``gateway``).
  public var hopGateways: [[UInt8]] = []
  /// `RTA_CACHEINFO`'s `rta_expires` is not 0: the kernel removes the route when it expires
  /// (`RTF_EXPIRES`), as it does every default route it learnt from a router advertisement.
  public var expires = false

  /// Creates a route description.
  public init(
    family: UInt8, table: UInt32, type: UInt8, routingProtocol: UInt8,
    destinationPrefixLength: UInt8, destination: [UInt8], metric: UInt32,
    interfaceIndices: [Int32], nexthopID: UInt32? = nil, preferredSource: [UInt8] = []
  ) {
    self.nexthopID = nexthopID
    self.preferredSource = preferredSource
    self.family = family
    self.table = table
    self.type = type
    self.routingProtocol = routingProtocol
    self.destinationPrefixLength = destinationPrefixLength
    self.destination = destination
    self.metric = metric
    self.interfaceIndices = interfaceIndices
  }

  /// A destination prefix length of 0: a default route.
  public var isDefault: Bool { destinationPrefixLength == 0 }
}
