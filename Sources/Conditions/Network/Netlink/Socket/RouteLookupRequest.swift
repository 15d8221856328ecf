/// Builds `RTM_GETROUTE` requests *without* `NLM_F_DUMP`: the kernel answers with the route it
/// would use for a destination (what `ip route get ADDRESS` prints), after evaluating policy
/// rules, every table and nexthop objects. It is a routing-table lookup only: no packet is sent.
public enum RouteLookupRequest {
  /// Set in the sequence number of every lookup, so replies (and their captures) are told apart
  /// from notifications; other programs number their requests from the clock (< 2^31).
  public static let sequenceMarker: UInt32 = 0x8000_0000
  /// `RTM_F_LOOKUP_TABLE`.
  static let lookupTableFlag: UInt32 = 0x1000

  /// A lookup of `destination` (4 bytes: IPv4, 16 bytes: IPv6). `sequence` gets
  /// ``sequenceMarker`` added.
  public static func message(destination: [UInt8], sequence: UInt32) -> [UInt8] {
    precondition(destination.count == 4 || destination.count == 16, "an IPv4 or IPv6 address")
    let family = destination.count == 4 ? NetlinkConstant.familyIPv4 : NetlinkConstant.familyIPv6
    let attributeLength = 4 + destination.count
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + 12 + attributeLength), type: 26,  // RTM_GETROUTE
      flags: NetlinkConstant.flagRequest, sequence: sequence | sequenceMarker, portID: 0)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(header.length))
    header.append(to: &bytes)
    // struct rtmsg: family, dst_len, then zeros (src_len, tos, table, protocol, scope, type),
    // then rtm_flags: RTM_F_LOOKUP_TABLE, so that an IPv4 reply names the table the route was
    // found in (as `ip route get` asks; without it the kernel says `main` whatever the rules
    // chose, and the metric of the wrong table's route would rank the families).
    bytes.append(family)
    bytes.append(UInt8(destination.count * 8))
    bytes.append(contentsOf: repeatElement(0, count: 6))
    bytes.appendHostOrder(lookupTableFlag)
    bytes.appendHostOrder(UInt16(attributeLength))
    bytes.appendHostOrder(UInt16(1))  // RTA_DST
    bytes += destination
    return bytes
  }

  /// A request the kernel answers only under the routing lock (RTNL): `RTM_GETLINK` of the
  /// loopback link (index 1 in every namespace). Sent ahead of lookups in the same datagram, it
  /// holds them until a change the kernel has notified but not finished (a deleted nexthop
  /// object's routes are removed after its `RTM_DELNEXTHOP`, under the lock) is done, as the
  /// kernel handles a datagram's messages in order. `sequence` gets ``sequenceMarker`` added.
  public static func barrier(sequence: UInt32) -> [UInt8] {
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + 16), type: 18,  // RTM_GETLINK
      flags: NetlinkConstant.flagRequest, sequence: sequence | sequenceMarker, portID: 0)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Int(header.length))
    header.append(to: &bytes)
    // struct ifinfomsg: family, pad, type, index 1 (lo), flags, change.
    bytes.append(contentsOf: [0, 0, 0, 0])
    bytes.appendHostOrder(Int32(1))
    bytes.append(contentsOf: repeatElement(0, count: 8))
    return bytes
  }

  /// Whether `header` belongs to a lookup (a request, its reply or its error), judged by the
  /// sequence marker; dump replies (`NLM_F_MULTI`) never do.
  public static func isLookup(_ header: NetlinkHeader) -> Bool {
    header.sequence & sequenceMarker != 0 && !header.isMultipart
  }
}
