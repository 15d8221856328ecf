/// A policy-routing rule as described by `RTM_NEWRULE` / `RTM_DELRULE` (`ip rule`).
///
/// Only what decides a locally generated lookup is kept; selectors such a lookup can never
/// satisfy (ports, IP protocol, uid range, tunnel id, l3mdev, TOS, DSCP) are summed up in
/// ``hasUnmatchableSelector``.
public struct RuleInfo: Sendable, Hashable {
  /// `AF_INET` or `AF_INET6`.
  public var family: UInt8
  /// `FRA_PRIORITY`: lower is evaluated first.
  public var priority: UInt32
  /// `FR_ACT_*`: 1 lookup a table, 2 goto, 3 nop, 6 blackhole, 7 unreachable, 8 prohibit.
  public var action: UInt8
  /// `FRA_TABLE` (or the header's table) for ``action`` 1.
  public var table: UInt32
  /// `FIB_RULE_INVERT` (`ip rule add not …`): the rule applies when its selectors do *not*
  /// match.
  public var isInverted: Bool
  /// Destination prefix length; 0 matches every destination.
  public var destinationPrefixLength: UInt8
  /// `FRA_DST` bytes (empty without a destination selector).
  public var destination: [UInt8]
  /// Source prefix length; a lookup without a source address only matches 0.
  public var sourcePrefixLength: UInt8
  /// `FRA_FWMARK` (0 when absent).
  public var firewallMark: UInt32
  /// `FRA_FWMASK` (all ones when a mark is given without a mask, 0 without a mark).
  public var firewallMask: UInt32
  /// `FRA_IIFNAME` (`iif`); locally generated traffic comes from `lo`.
  public var inputInterface: String?
  /// `FRA_OIFNAME` (`oif`).
  public var outputInterface: String?
  /// `FRA_SUPPRESS_PREFIXLEN`: results with a prefix this short or shorter are ignored.
  public var suppressPrefixLength: Int32?
  /// `FRA_GOTO`: the priority of the rule ``action`` 2 jumps to.
  public var gotoPriority: UInt32?
  /// The rule has a selector a plain lookup never matches (TOS, ports, protocol, uid range, …).
  public var hasUnmatchableSelector: Bool

  /// Creates a rule; the defaults describe `ip rule add lookup TABLE` with no selector.
  public init(
    family: UInt8, priority: UInt32, action: UInt8 = 1, table: UInt32, isInverted: Bool = false,
    destinationPrefixLength: UInt8 = 0, destination: [UInt8] = [], sourcePrefixLength: UInt8 = 0,
    firewallMark: UInt32 = 0, firewallMask: UInt32 = 0, inputInterface: String? = nil,
    outputInterface: String? = nil, suppressPrefixLength: Int32? = nil,
    gotoPriority: UInt32? = nil, hasUnmatchableSelector: Bool = false
  ) {
    self.family = family
    self.priority = priority
    self.action = action
    self.table = table
    self.isInverted = isInverted
    self.destinationPrefixLength = destinationPrefixLength
    self.destination = destination
    self.sourcePrefixLength = sourcePrefixLength
    self.firewallMark = firewallMark
    self.firewallMask = firewallMask
    self.inputInterface = inputInterface
    self.outputInterface = outputInterface
    self.suppressPrefixLength = suppressPrefixLength
    self.gotoPriority = gotoPriority
    self.hasUnmatchableSelector = hasUnmatchableSelector
  }
}

/// A nexthop object as described by `RTM_NEWNEXTHOP` / `RTM_DELNEXTHOP` (`ip nexthop`).
public struct NexthopInfo: Sendable, Hashable {
  /// `NHA_ID`.
  public var id: UInt32
  /// `nh_family` (`AF_UNSPEC` for groups and blackholes).
  public var family: UInt8
  /// `NHA_OIF` (0 for groups and blackholes).
  public var interfaceIndex: Int32
  /// `NHA_GROUP`: member nexthop ids, in order (empty for a single nexthop).
  public var group: [UInt32]
  /// `NHA_BLACKHOLE`.
  public var isBlackhole: Bool

  /// Creates a nexthop description.
  public init(
    id: UInt32, family: UInt8, interfaceIndex: Int32, group: [UInt32] = [],
    isBlackhole: Bool = false
  ) {
    self.id = id
    self.family = family
    self.interfaceIndex = interfaceIndex
    self.group = group
    self.isBlackhole = isBlackhole
  }
}
