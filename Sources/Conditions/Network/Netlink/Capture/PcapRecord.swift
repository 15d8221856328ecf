/// One packet of a LINKTYPE_NETLINK pcap or pcapng file: a netlink datagram with its direction,
/// time and (pcapng only) comments.
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
  /// The packet's `opt_comment` options (pcapng), in order.
  public var comments: [String]

  /// Creates a record.
  public init(
    timestampMicroseconds: Int64, direction: Direction, netlinkProtocol: UInt16 = 0,
    message: [UInt8], comments: [String] = []
  ) {
    self.comments = comments
    self.timestampMicroseconds = timestampMicroseconds
    self.direction = direction
    self.netlinkProtocol = netlinkProtocol
    self.message = message
  }
}

/// Layout constants of the pcap and pcapng formats with LINKTYPE_NETLINK.
enum PcapFormat {
  static let blockSectionHeader: UInt32 = 0x0A0D_0D0A
  static let blockInterfaceDescription: UInt32 = 1
  static let blockSimplePacket: UInt32 = 3
  static let blockEnhancedPacket: UInt32 = 6
  static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
  static let optionEnd: UInt16 = 0
  static let optionComment: UInt16 = 1
  static let optionUserApplication: UInt16 = 4  // shb_userappl
  static let optionInterfaceName: UInt16 = 2  // if_name
  static let optionTimestampResolution: UInt16 = 9  // if_tsresol
  static let optionPacketFlags: UInt16 = 2  // epb_flags

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
