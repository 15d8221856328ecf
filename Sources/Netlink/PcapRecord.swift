/// One packet of a LINKTYPE_NETLINK pcap file: a netlink datagram with its direction and time.
public struct PcapRecord: Sendable, Equatable {
  /// Whether the kernel sent the datagram to us or we sent it (e.g. a dump request).
  public enum Direction: Sendable, Equatable {
    /// `PACKET_HOST` (0): received from the kernel.
    case incoming
    /// `PACKET_OUTGOING` (4): sent by this process.
    case outgoing
  }

  /// Capture time in microseconds since the Unix epoch.
  public var timestampMicroseconds: Int64
  /// Packet direction, from the cooked header's packet type.
  public var direction: Direction
  /// Netlink protocol family from the cooked header (`NETLINK_ROUTE` is 0).
  public var netlinkProtocol: UInt16
  /// The netlink message bytes that follow the 16-byte cooked header.
  public var message: [UInt8]

  /// Creates a record.
  public init(
    timestampMicroseconds: Int64, direction: Direction, netlinkProtocol: UInt16 = 0,
    message: [UInt8]
  ) {
    self.timestampMicroseconds = timestampMicroseconds
    self.direction = direction
    self.netlinkProtocol = netlinkProtocol
    self.message = message
  }
}

/// Layout constants of the pcap format with LINKTYPE_NETLINK.
enum PcapFormat {
  static let magicMicroseconds: UInt32 = 0xA1B2_C3D4
  static let magicNanoseconds: UInt32 = 0xA1B2_3C4D
  static let linkTypeNetlink: UInt32 = 253
  static let fileHeaderSize = 24
  static let recordHeaderSize = 16
  static let cookedHeaderSize = 16
  static let snapLength: UInt32 = 262_144
  static let packetTypeHost: UInt16 = 0
  static let packetTypeOutgoing: UInt16 = 4
}

/// Why a pcap file could not be read.
public struct PcapError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What was wrong, naming the record when it concerns one.
  public var reason: String

  /// Creates an error naming what was wrong.
  public init(_ reason: String) { self.reason = reason }

  /// A one-line explanation.
  public var description: String { "unreadable pcap: \(reason)" }
}
