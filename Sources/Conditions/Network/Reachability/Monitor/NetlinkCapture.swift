import Netlink

/// A pcapng file (LINKTYPE_NETLINK) receiving every datagram the monitor sends or receives,
/// initial dump and egress lookups included, plus the sysfs facts of each link as a packet
/// comment (``LinkFactsComment``); readable by `tshark -r FILE -V` and by
/// ``ReachabilityReplay`` on any machine.
public final class NetlinkCapture: Sendable {
  private let writer: PcapWriter

  /// Creates the capture file at `path` (mode 0600); an existing file is refused unless
  /// `replacingExisting` (see ``Netlink/PcapWriter/init(path:replacingExisting:)``).
  public init(path: String, replacingExisting: Bool = false) throws {
    writer = try PcapWriter(path: path, replacingExisting: replacingExisting)
  }

  func record(
    _ datagram: [UInt8], outgoing: Bool, facts: [(name: String, facts: LinkFacts)] = []
  ) throws {
    try writer.write(
      datagram, direction: outgoing ? .outgoing : .incoming,
      comments: facts.map { LinkFactsComment.encode(name: $0.name, facts: $0.facts) })
  }

  /// Closes the file.
  public func close() throws { try writer.close() }
}
