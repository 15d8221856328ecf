import CNetlink
import Glibc
import SystemCalls

/// A classic BPF socket filter that lets the kernel drop, before they wake anyone,
/// notifications that cannot change the answer: routes to specific prefixes (`rtm_dst_len` ≠ 0:
/// a large FIB's churn, the kernel's own local and multicast routes) and IPv6 addresses that are
/// not of global scope (link-local addresses appearing when duplicate address detection ends,
/// a second or more after a link came up). Dump replies (`NLM_F_MULTI`) and the replies to our
/// own lookups (``RouteLookupRequest/sequenceMarker``) always pass. The filter reads only the
/// first message of a datagram; the kernel sends each notification in a datagram of its own.
enum NotificationFilter {
  private static let accept: UInt32 = 0xFFFF_FFFF
  private static let drop: UInt32 = 0

  /// Byte offsets in the datagram: `struct nlmsghdr` (16 bytes, host order) then the body.
  private enum Offset {
    static let typeLowByte: UInt32 = 4
    static let flagsLowByte: UInt32 = 6
    static let sequenceHighByte: UInt32 = 11
    /// `rtmsg.rtm_dst_len`.
    static let routeDestinationLength: UInt32 = 17
    /// `ifaddrmsg.ifa_family`.
    static let addressFamily: UInt32 = 16
    /// `ifaddrmsg.ifa_scope`.
    static let addressScope: UInt32 = 19
  }

  private static let loadByte = UInt16(BPF_LD | BPF_B | BPF_ABS)
  private static let jumpIfEqual = UInt16(BPF_JMP | BPF_JEQ | BPF_K)
  private static let jumpIfAnyBit = UInt16(BPF_JMP | BPF_JSET | BPF_K)
  private static let returnConstant = UInt16(BPF_RET | BPF_K)

  /// The program; a jump skips `jt` / `jf` instructions (15: accept, 16: drop).
  static let program: [sock_filter] = [
    load(Offset.flagsLowByte),  // 0
    jump(ifAnyBit: UInt32(NetlinkConstant.flagMulti), then: 13),  // 1: a dump reply: 15
    load(Offset.sequenceHighByte),  // 2
    jump(ifAnyBit: RouteLookupRequest.sequenceMarker >> 24, then: 11),  // 3: our lookup: 15
    load(Offset.typeLowByte),  // 4
    jump(ifEqual: 24, then: 3),  // 5: RTM_NEWROUTE: 9
    jump(ifEqual: 25, then: 2),  // 6: RTM_DELROUTE: 9
    jump(ifEqual: 20, then: 3),  // 7: RTM_NEWADDR: 11
    jump(ifEqual: 21, then: 2, else: 6),  // 8: RTM_DELADDR: 11, anything else: 15
    load(Offset.routeDestinationLength),  // 9
    jump(ifEqual: 0, then: 4, else: 5),  // 10: a default route: 15, else 16
    load(Offset.addressFamily),  // 11
    jump(ifEqual: UInt32(NetlinkConstant.familyIPv6), then: 0, else: 2),  // 12: IPv4: 15
    load(Offset.addressScope),  // 13
    jump(ifEqual: UInt32(NetlinkConstant.scopeUniverse), then: 0, else: 1),  // 14
    sock_filter(code: returnConstant, jt: 0, jf: 0, k: accept),  // 15
    sock_filter(code: returnConstant, jt: 0, jf: 0, k: drop),  // 16
  ]

  private static func load(_ offset: UInt32) -> sock_filter {
    sock_filter(code: loadByte, jt: 0, jf: 0, k: offset)
  }

  private static func jump(ifEqual value: UInt32, then: UInt8, else otherwise: UInt8 = 0)
    -> sock_filter
  {
    sock_filter(code: jumpIfEqual, jt: then, jf: otherwise, k: value)
  }

  private static func jump(ifAnyBit bits: UInt32, then: UInt8) -> sock_filter {
    sock_filter(code: jumpIfAnyBit, jt: then, jf: 0, k: bits)
  }

  /// Attaches the program to `descriptor` (`SO_ATTACH_FILTER`).
  static func attach(to descriptor: Int32) throws(SystemCallError) {
    var instructions = program
    _ = try systemCall("SO_ATTACH_FILTER") {
      instructions.withUnsafeMutableBufferPointer { buffer in
        var program = sock_fprog(len: UInt16(buffer.count), filter: buffer.baseAddress)
        return setsockopt(
          descriptor, SOL_SOCKET, SO_ATTACH_FILTER, &program,
          socklen_t(MemoryLayout<sock_fprog>.size))
      }
    }
  }
}
