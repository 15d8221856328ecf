import Glibc
import Netlink

/// Makes route and link changes with its own rtnetlink socket (inside the benchmark's network
/// namespace) and waits for the kernel's ACK of each request.
final class RouteChanger: Sendable {
  let descriptor: Int32

  init(namespacePath: String) throws {
    descriptor = try NetworkNamespace.perform(inNamespaceAt: namespacePath) {
      let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { throw RouteChangeError(operation: "socket", errno: errno) }
      return fd
    }
  }

  deinit { close(descriptor) }

  /// `ip route add/del default via GATEWAY dev INDEX metric METRIC` (IPv4, main table).
  func defaultRoute(add: Bool, gateway: [UInt8], interfaceIndex: Int32, metric: UInt32 = 0)
    throws
  {
    var body: [UInt8] = [2, 0, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0]  // rtmsg: inet, main, boot, unicast
    body += attribute(5, gateway) + attribute(4, bytes(of: UInt32(interfaceIndex)))
    if metric != 0 { body += attribute(6, bytes(of: metric)) }
    let flags: UInt16 = add ? 0x400 | 0x200 : 0  // NLM_F_CREATE | NLM_F_EXCL
    try request(type: add ? 24 : 25, flags: flags, body: body)
  }

  /// `ip link set INDEX up/down`.
  func link(_ interfaceIndex: Int32, up: Bool) throws {
    var body: [UInt8] = [0, 0, 0, 0] + bytes(of: UInt32(bitPattern: interfaceIndex))
    body += bytes(of: UInt32(up ? 1 : 0)) + bytes(of: UInt32(1))  // flags, change = IFF_UP
    try request(type: 16, flags: 0, body: body)
  }

  private func request(type: UInt16, flags: UInt16, body: [UInt8]) throws {
    let header = NetlinkHeader(
      length: UInt32(16 + body.count), type: type,
      flags: NetlinkConstant.flagRequest | NetlinkConstant.flagAck | flags, sequence: 1,
      portID: 0)
    let message = header.encoded + body
    guard send(descriptor, message, message.count, 0) == message.count else {
      throw RouteChangeError(operation: "send", errno: errno)
    }
    var reply = [UInt8](repeating: 0, count: 4096)
    let count = recv(descriptor, &reply, reply.count, 0)
    guard count >= 20 else { throw RouteChangeError(operation: "recv ACK", errno: errno) }
    let code = Int32(
      bitPattern: UInt32(reply[16]) | UInt32(reply[17]) << 8 | UInt32(reply[18]) << 16 | UInt32(
        reply[19]) << 24)
    guard code == 0 else {
      throw RouteChangeError(operation: "rtnetlink request \(type)", errno: -code)
    }
  }

  private func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
    let length = UInt16(4 + payload.count)
    let padding = [UInt8](repeating: 0, count: (4 - Int(length) % 4) % 4)
    return bytes(of: length) + bytes(of: type) + payload + padding
  }

  private func bytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
  }
}

/// A failed request of the benchmark's own rtnetlink socket.
struct RouteChangeError: Error, CustomStringConvertible {
  var operation: String
  var errno: Int32

  var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
}
