import Glibc
import Testing

@testable import Netlink

/// The socket filter run by the kernel itself: attached to one end of a datagram socket pair,
/// it lets through the messages sent to the other end that can change the answer. Routes to
/// specific prefixes pass only when they cover a probe destination.
@Suite struct NotificationFilterTests {
  private static let probes: [[UInt8]] = [
    [8, 8, 8, 8],
    [0x20, 0x01, 0x48, 0x60, 0x48, 0x60] + Array(repeating: 0, count: 8) + [0x88, 0x88],
  ]

  /// A route notification as the kernel lays it out: rtmsg, RTA_TABLE, then RTA_DST.
  private func route(family: UInt8, prefix: [UInt8], length: UInt8, flags: UInt16 = 0) -> [UInt8] {
    var body: [UInt8] = [family, length, 0, 0, 254, 3, 0, 1, 0, 0, 0, 0]
    body += [8, 0, 15, 0, 254, 0, 0, 0]  // RTA_TABLE main
    if length > 0 { body += [UInt8(4 + prefix.count), 0, 1, 0] + prefix }  // RTA_DST
    body += [8, 0, 4, 0, 2, 0, 0, 0]  // RTA_OIF
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + body.count), type: 24, flags: flags, sequence: 0,
      portID: 0)
    return header.encoded + body
  }

  /// Which of `messages` the filter lets through.
  private func passing(_ messages: [[UInt8]]) throws -> [Bool] {
    var ends: [Int32] = [0, 0]
    try #require(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &ends) == 0)
    defer {
      close(ends[0])
      close(ends[1])
    }
    try NotificationFilter.attach(to: ends[1], covering: Self.probes)
    var results: [Bool] = []
    var buffer = [UInt8](repeating: 0, count: 512)
    for message in messages {
      _ = message.withUnsafeBytes { send(ends[0], $0.baseAddress, $0.count, 0) }
      let received = recv(ends[1], &buffer, buffer.count, Int32(MSG_DONTWAIT))
      results.append(received > 0)
    }
    return results
  }

  @Test func routesCoveringAProbeDestinationPass() throws {
    let v6 = Self.probes[1]
    let results = try passing([
      route(family: 2, prefix: [], length: 0),  // default: passes
      route(family: 2, prefix: [0, 0, 0, 0], length: 1),  // 0.0.0.0/1 covers 8.8.8.8
      route(family: 2, prefix: [128, 0, 0, 0], length: 1),  // 128.0.0.0/1 does not
      route(family: 2, prefix: [8, 0, 0, 0], length: 8),
      route(family: 2, prefix: [8, 8, 8, 0], length: 24),
      route(family: 2, prefix: [8, 8, 9, 0], length: 24),
      route(family: 2, prefix: [8, 8, 8, 8], length: 32),
      route(family: 2, prefix: [8, 8, 8, 9], length: 32),
      route(family: 2, prefix: [10, 1, 2, 0], length: 24),
      route(family: 10, prefix: [0x20] + Array(repeating: 0, count: 15), length: 3),  // 2000::/3
      route(family: 10, prefix: Array(v6.prefix(4)) + Array(repeating: 0, count: 12), length: 32),
      route(family: 10, prefix: Array(v6.prefix(8)) + Array(repeating: 0, count: 8), length: 33),
      route(family: 10, prefix: v6, length: 128),
      route(family: 10, prefix: Array(v6.dropLast()) + [0x89], length: 128),
      route(family: 10, prefix: [0xfe, 0x80] + Array(repeating: 0, count: 14), length: 64),
      route(family: 10, prefix: Array(v6.prefix(12)) + [0x10, 0, 0, 0], length: 100),
      route(family: 2, prefix: [10, 1, 2, 0], length: 24, flags: NetlinkConstant.flagMulti),
    ])
    #expect(
      results == [
        true, true, false, true, true, false, true, false, false, true, true, true, true, false,
        false, false, true,
      ])
  }
}
