/// Numeric values from `<linux/netlink.h>`, `<linux/rtnetlink.h>` and `<linux/if_arp.h>` that
/// modules above `Netlink` need without importing the C headers.
public enum NetlinkConstant {
  /// `NLM_F_REQUEST`.
  public static let flagRequest: UInt16 = 0x01
  /// `NLM_F_MULTI`.
  public static let flagMulti: UInt16 = 0x02
  /// `NLM_F_ACK`.
  public static let flagAck: UInt16 = 0x04
  /// `NLM_F_DUMP_INTR`: the dump was interrupted by a change; its contents may be inconsistent.
  public static let flagDumpInterrupted: UInt16 = 0x10
  /// `NLM_F_DUMP` (`NLM_F_ROOT | NLM_F_MATCH`).
  public static let flagDump: UInt16 = 0x300
  /// `NLM_F_REPLACE`: a `RTM_NEW*` replaced an existing object (`ip route replace/change`).
  public static let flagReplace: UInt16 = 0x100
  /// `NLM_F_EXCL`: a `RTM_NEW*` created an object no other shared the identity of.
  public static let flagExclusive: UInt16 = 0x200
  /// `NLM_F_CREATE`: a `RTM_NEW*` created an object.
  public static let flagCreate: UInt16 = 0x400
  /// `NLM_F_APPEND`: a `RTM_NEW*` was added after the objects of the same identity
  /// (`ip route append`); without it, before them (`ip route prepend`, `add`).
  public static let flagAppend: UInt16 = 0x800

  /// `NLMSG_NOOP`.
  public static let messageNoop: UInt16 = 1
  /// `NLMSG_ERROR`.
  public static let messageError: UInt16 = 2
  /// `NLMSG_DONE`.
  public static let messageDone: UInt16 = 3
  /// `NLMSG_OVERRUN`.
  public static let messageOverrun: UInt16 = 4

  /// `AF_UNSPEC`.
  public static let familyUnspecified: UInt8 = 0
  /// `AF_INET`.
  public static let familyIPv4: UInt8 = 2
  /// `AF_INET6`.
  public static let familyIPv6: UInt8 = 10

  /// `RT_TABLE_DEFAULT`.
  public static let tableDefault: UInt32 = 253
  /// `RT_TABLE_MAIN`.
  public static let tableMain: UInt32 = 254
  /// `RT_TABLE_LOCAL`.
  public static let tableLocal: UInt32 = 255

  /// `FR_ACT_TO_TBL`: look the destination up in the rule's table.
  public static let ruleActionTable: UInt8 = 1
  /// `FR_ACT_GOTO`: continue at the rule with priority `FRA_GOTO`.
  public static let ruleActionGoto: UInt8 = 2
  /// `FR_ACT_NOP`.
  public static let ruleActionNop: UInt8 = 3
  /// `RTN_UNICAST`.
  public static let routeTypeUnicast: UInt8 = 1
  /// `RT_SCOPE_UNIVERSE`: a global address.
  public static let scopeUniverse: UInt8 = 0

  /// `IFF_UP`.
  public static let interfaceUp: UInt32 = 0x1
  /// `IFF_LOOPBACK`.
  public static let interfaceLoopback: UInt32 = 0x8
  /// `IFF_RUNNING`: the link is operationally up.
  public static let interfaceRunning: UInt32 = 0x40
  /// `IFF_LOWER_UP`: the link has carrier.
  public static let interfaceLowerUp: UInt32 = 0x10000

  /// `IFA_F_DADFAILED`.
  public static let addressDADFailed: UInt32 = 0x08
  /// `IFA_F_TENTATIVE`: duplicate address detection has not finished.
  public static let addressTentative: UInt32 = 0x40
}

/// ARPHRD_* hardware types (`ifi_type`) that matter for classification.
public enum HardwareType {
  /// `ARPHRD_ETHER`.
  public static let ethernet: UInt16 = 1
  /// `ARPHRD_PPP`.
  public static let ppp: UInt16 = 512
  /// `ARPHRD_RAWIP`: cellular data path (rmnet, mhi, bam_dmux).
  public static let rawIP: UInt16 = 519
  /// `ARPHRD_TUNNEL` (ipip).
  public static let tunnel: UInt16 = 768
  /// `ARPHRD_TUNNEL6`.
  public static let tunnel6: UInt16 = 769
  /// `ARPHRD_LOOPBACK`.
  public static let loopback: UInt16 = 772
  /// `ARPHRD_SIT`.
  public static let sit: UInt16 = 776
  /// `ARPHRD_IPGRE`.
  public static let ipGRE: UInt16 = 778
  /// `ARPHRD_IEEE80211`.
  public static let ieee80211: UInt16 = 801
  /// `ARPHRD_NETLINK`.
  public static let netlink: UInt16 = 824
  /// `ARPHRD_NONE`: no hardware header (WireGuard, tun, qmi_wwan raw-IP).
  public static let none: UInt16 = 0xFFFE
}
