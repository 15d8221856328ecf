/// The fixed 16-byte header (`struct nlmsghdr`) that starts every netlink message.
public struct NetlinkHeader: Sendable, Equatable {
  /// `nlmsg_len`: length of the message including this header.
  public var length: UInt32
  /// `nlmsg_type`: for rtnetlink `RTM_*`, or a control type (`NLMSG_DONE`, `NLMSG_ERROR`, ...).
  public var type: UInt16
  /// `nlmsg_flags` (`NLM_F_*`).
  public var flags: UInt16
  /// `nlmsg_seq`: the request's sequence number, echoed in replies and notifications.
  public var sequence: UInt32
  /// `nlmsg_pid`: port id of the sender (requests, replies) or of the process that caused
  /// a notification. Not the sender of the datagram: see ``ReceivedDatagram/senderPort``.
  public var portID: UInt32

  /// Size of the encoded header in bytes.
  public static let size = 16

  /// Creates a header from its fields.
  public init(length: UInt32, type: UInt16, flags: UInt16, sequence: UInt32, portID: UInt32) {
    self.length = length
    self.type = type
    self.flags = flags
    self.sequence = sequence
    self.portID = portID
  }

  /// Decodes the header at the start of `bytes` (host byte order, as netlink uses).
  /// Returns `nil` when fewer than 16 bytes are available.
  public init?(decoding bytes: ArraySlice<UInt8>) {
    guard bytes.count >= Self.size else { return nil }
    let base = bytes.startIndex
    length = bytes.loadUInt32(at: base)
    type = bytes.loadUInt16(at: base + 4)
    flags = bytes.loadUInt16(at: base + 6)
    sequence = bytes.loadUInt32(at: base + 8)
    portID = bytes.loadUInt32(at: base + 12)
  }

  /// The header encoded in host byte order.
  public var encoded: [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(Self.size)
    append(to: &bytes)
    return bytes
  }

  /// Appends the header, encoded in host byte order, to `bytes`.
  func append(to bytes: inout [UInt8]) {
    bytes.appendHostOrder(length)
    bytes.appendHostOrder(type)
    bytes.appendHostOrder(flags)
    bytes.appendHostOrder(sequence)
    bytes.appendHostOrder(portID)
  }

  /// Whether `NLM_F_MULTI` is set: the message is part of a multipart (dump) reply.
  public var isMultipart: Bool { flags & NetlinkConstant.flagMulti != 0 }
}

extension ArraySlice<UInt8> {
  func loadUInt16(at index: Index) -> UInt16 {
    UInt16(self[index]) | UInt16(self[index + 1]) << 8
  }

  func loadUInt32(at index: Index) -> UInt32 {
    var value: UInt32 = 0
    for offset in 0..<4 { value |= UInt32(self[index + offset]) << (8 * offset) }
    return value
  }
}

extension [UInt8] {
  mutating func appendHostOrder<T: FixedWidthInteger>(_ value: T) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }
}
