import Netlink

/// A pcap file (LINKTYPE_NETLINK) receiving every datagram the monitor sends or receives,
/// initial dump included; readable by `tshark -r FILE -V` and by ``ReachabilityReplay``.
public final class NetlinkCapture: Sendable {
  private let writer: PcapWriter

  /// Creates (or truncates) the capture file at `path`.
  public init(path: String) throws {
    writer = try PcapWriter(path: path)
  }

  func record(_ datagram: [UInt8], outgoing: Bool) throws {
    try writer.write(datagram, direction: outgoing ? .outgoing : .incoming)
  }

  /// Closes the file.
  public func close() throws { try writer.close() }
}
