import CNetlink
import Glibc
import SystemCalls

/// A classic BPF socket filter that lets the kernel drop, before they wake anyone,
/// notifications that cannot change the answer: routes to specific prefixes (`rtm_dst_len` ≠ 0:
/// a large FIB's churn, the kernel's own local and multicast routes) that do not cover one of
/// the probe destinations, and IPv6 addresses that are not of global scope (link-local
/// addresses appearing when duplicate address detection ends, a second or more after a link
/// came up). A route to a prefix covering a probe destination (OpenVPN's `0.0.0.0/1`) passes:
/// it can move the egress. Dump replies (`NLM_F_MULTI`) and the replies to our own lookups
/// (``RouteLookupRequest/sequenceMarker``) always pass. The filter reads only the first message
/// of a datagram; the kernel sends each notification in a datagram of its own.
enum NotificationFilter {
  private static let accept: UInt32 = 0xFFFF_FFFF
  private static let drop: UInt32 = 0

  /// Byte offsets in the datagram: `struct nlmsghdr` (16 bytes, host order) then the body.
  private enum Offset {
    static let typeLowByte: UInt32 = 4
    static let flagsLowByte: UInt32 = 6
    static let sequenceHighByte: UInt32 = 11
    /// `rtmsg.rtm_family`.
    static let routeFamily: UInt32 = 16
    /// `rtmsg.rtm_dst_len`.
    static let routeDestinationLength: UInt32 = 17
    /// The first attribute after the 12-byte `rtmsg`: the kernel puts `RTA_TABLE` there (8
    /// bytes), then `RTA_DST` (`fib_dump_info`, `rt6_fill_node`).
    static let firstRouteAttribute: UInt32 = 28
    static let secondRouteAttribute: UInt32 = 36
    static let routeDestination: UInt32 = 40
    /// `ifaddrmsg.ifa_family`.
    static let addressFamily: UInt32 = 16
    /// `ifaddrmsg.ifa_scope`.
    static let addressScope: UInt32 = 19
  }

  /// One instruction with symbolic jump targets, resolved by ``assemble(_:)``.
  private enum Step {
    case label(String)
    case loadByte(UInt32)
    case loadWord(UInt32)
    case loadConstant(UInt32)
    /// X = A.
    case copyToX
    /// A = A - X.
    case subtractX
    case xor(UInt32)
    /// A = A >> X.
    case shiftRightX
    case jump(UInt16, UInt32, then: String, else: String)
    case ret(UInt32)
  }

  private static let equal = UInt16(BPF_JMP | BPF_JEQ | BPF_K)
  private static let anyBit = UInt16(BPF_JMP | BPF_JSET | BPF_K)
  private static let greater = UInt16(BPF_JMP | BPF_JGT | BPF_K)
  private static let greaterOrEqual = UInt16(BPF_JMP | BPF_JGE | BPF_K)

  /// The program for probe destinations `destinations` (4- or 16-byte addresses; one of each
  /// family at most is checked).
  static func program(covering destinations: [[UInt8]] = []) -> [sock_filter] {
    let ipv4 = destinations.first { $0.count == 4 }
    let ipv6 = destinations.first { $0.count == 16 }
    var steps: [Step] = [
      .loadByte(Offset.flagsLowByte),
      .jump(anyBit, UInt32(NetlinkConstant.flagMulti), then: "accept", else: "next0"),  // dump
      .label("next0"),
      .loadByte(Offset.sequenceHighByte),
      .jump(anyBit, RouteLookupRequest.sequenceMarker >> 24, then: "accept", else: "type"),
      .label("type"),
      .loadByte(Offset.typeLowByte),
      .jump(equal, 24, then: "route", else: "type1"),  // RTM_NEWROUTE
      .label("type1"),
      .jump(equal, 25, then: "route", else: "type2"),  // RTM_DELROUTE
      .label("type2"),
      .jump(equal, 20, then: "address", else: "type3"),  // RTM_NEWADDR
      .label("type3"),
      .jump(equal, 21, then: "address", else: "accept"),  // RTM_DELADDR; anything else
      .label("address"),
      .loadByte(Offset.addressFamily),
      .jump(equal, UInt32(NetlinkConstant.familyIPv6), then: "scope", else: "accept"),
      .label("scope"),
      .loadByte(Offset.addressScope),
      .jump(equal, UInt32(NetlinkConstant.scopeUniverse), then: "accept", else: "drop"),
      .label("route"),
      .loadByte(Offset.routeDestinationLength),
      .jump(equal, 0, then: "accept", else: "prefix"),  // a default route
      .label("prefix"),
      .loadByte(Offset.routeFamily),
      .jump(
        equal, UInt32(NetlinkConstant.familyIPv4), then: ipv4 == nil ? "drop" : "ipv4",
        else: "family6"),
      .label("family6"),
      .jump(
        equal, UInt32(NetlinkConstant.familyIPv6), then: ipv6 == nil ? "drop" : "ipv6",
        else: "drop"),
    ]
    if let ipv4 { steps += covers(ipv4, label: "ipv4", destinationAttribute: 0x0800_0100) }
    if let ipv6 { steps += covers(ipv6, label: "ipv6", destinationAttribute: 0x1400_0100) }
    steps += [.label("accept"), .ret(accept), .label("drop"), .ret(drop)]
    return assemble(steps)
  }

  /// Whether the route's `RTA_DST` prefix covers `destination`: accept if it does, drop if not.
  /// A message laid out otherwise than the kernel's (`RTA_TABLE`, then `RTA_DST`) is accepted.
  private static func covers(_ destination: [UInt8], label: String, destinationAttribute: UInt32)
    -> [Step]
  {
    // `nlattr` headers as loaded (big-endian words of little-endian fields): RTA_TABLE, 8 bytes.
    var steps: [Step] = [
      .label(label),
      .loadWord(Offset.firstRouteAttribute),
      .jump(equal, 0x0800_0F00, then: "\(label)-dst", else: "accept"),
      .label("\(label)-dst"),
      .loadWord(Offset.secondRouteAttribute),
      .jump(equal, destinationAttribute, then: "\(label)-w0", else: "accept"),
    ]
    let words = destination.count / 4
    for word in 0..<words {
      let value = destination[(word * 4)..<(word * 4 + 4)].reduce(UInt32(0)) {
        $0 << 8 | UInt32($1)
      }
      let start = UInt32(32 * word)
      let end = start + 32
      let next = word + 1 < words ? "\(label)-w\(word + 1)" : "accept"
      steps += [
        .label("\(label)-w\(word)"),
        .loadByte(Offset.routeDestinationLength),
        // A prefix ending before this word: every bit of it matched.
        .jump(greater, start, then: "\(label)-in\(word)", else: "accept"),
        .label("\(label)-in\(word)"),
        .jump(greater, UInt32(destination.count * 8), then: "drop", else: "\(label)-len\(word)"),
        .label("\(label)-len\(word)"),
        .jump(greaterOrEqual, end, then: "\(label)-full\(word)", else: "\(label)-part\(word)"),
        // The prefix ends inside this word: compare its top (length - start) bits.
        .label("\(label)-part\(word)"),
        .copyToX,
        .loadConstant(end),
        .subtractX,
        .copyToX,
        .loadWord(Offset.routeDestination + 4 * UInt32(word)),
        .xor(value),
        .shiftRightX,
        .jump(equal, 0, then: "accept", else: "drop"),
        .label("\(label)-full\(word)"),
        .loadWord(Offset.routeDestination + 4 * UInt32(word)),
        .jump(equal, value, then: next, else: "drop"),
      ]
    }
    return steps
  }

  /// Resolves labels into relative jumps (a jump skips `jt` / `jf` instructions).
  private static func assemble(_ steps: [Step]) -> [sock_filter] {
    var positions: [String: Int] = [:]
    var count = 0
    for step in steps {
      if case .label(let name) = step { positions[name] = count } else { count += 1 }
    }
    var program: [sock_filter] = []
    for step in steps {
      let here = program.count
      func offset(_ label: String) -> UInt8 {
        let distance = positions[label]! - here - 1
        precondition(distance >= 0 && distance < 256, "BPF jump to \(label) out of range")
        return UInt8(distance)
      }
      switch step {
      case .label: continue
      case .loadByte(let at):
        program.append(sock_filter(code: UInt16(BPF_LD | BPF_B | BPF_ABS), jt: 0, jf: 0, k: at))
      case .loadWord(let at):
        program.append(sock_filter(code: UInt16(BPF_LD | BPF_W | BPF_ABS), jt: 0, jf: 0, k: at))
      case .loadConstant(let value):
        program.append(sock_filter(code: UInt16(BPF_LD | BPF_IMM), jt: 0, jf: 0, k: value))
      case .copyToX:
        program.append(sock_filter(code: UInt16(BPF_MISC | BPF_TAX), jt: 0, jf: 0, k: 0))
      case .subtractX:
        program.append(sock_filter(code: UInt16(BPF_ALU | BPF_SUB | BPF_X), jt: 0, jf: 0, k: 0))
      case .xor(let value):
        program.append(sock_filter(code: UInt16(BPF_ALU | BPF_XOR | BPF_K), jt: 0, jf: 0, k: value))
      case .shiftRightX:
        program.append(sock_filter(code: UInt16(BPF_ALU | BPF_RSH | BPF_X), jt: 0, jf: 0, k: 0))
      case .jump(let code, let value, let then, let otherwise):
        program.append(sock_filter(code: code, jt: offset(then), jf: offset(otherwise), k: value))
      case .ret(let value):
        program.append(sock_filter(code: UInt16(BPF_RET | BPF_K), jt: 0, jf: 0, k: value))
      }
    }
    return program
  }

  /// Attaches the program for `destinations` to `descriptor` (`SO_ATTACH_FILTER`).
  static func attach(to descriptor: Int32, covering destinations: [[UInt8]] = [])
    throws(SystemCallError)
  {
    var instructions = program(covering: destinations)
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
