/// Builds the dump requests (`RTM_GETLINK` / `RTM_GETADDR` / `RTM_GETRULE` / `RTM_GETNEXTHOP` /
/// `RTM_GETROUTE` with `NLM_F_DUMP`, family `AF_UNSPEC`) the monitor sends to learn the
/// current state.
public enum DumpRequest {
  /// The bytes of a dump request for `kind` with sequence number `sequence`.
  public static func message(for kind: ObjectKind, sequence: UInt32) -> [UInt8] {
    let (type, fixedSize): (UInt16, Int) =
      switch kind {
      case .link: (18, 16)  // RTM_GETLINK, struct ifinfomsg
      case .address: (22, 8)  // RTM_GETADDR, struct ifaddrmsg
      case .rule: (34, 12)  // RTM_GETRULE, struct fib_rule_hdr
      case .nexthop: (106, 8)  // RTM_GETNEXTHOP, struct nhmsg
      case .route: (26, 12)  // RTM_GETROUTE, struct rtmsg
      }
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + fixedSize), type: type,
      flags: NetlinkConstant.flagRequest | NetlinkConstant.flagDump, sequence: sequence, portID: 0)
    return header.encoded + [UInt8](repeating: 0, count: fixedSize)
  }
}
