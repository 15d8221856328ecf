import Glibc
import Netlink
import Testing

/// ``LinkCounters`` reads a link's byte counters from the kernel (`IFLA_STATS64`).
@Suite struct LinkCountersTests {
  @Test("bytes sent over loopback show in its counters")
  func loopbackCountsWhatIsSent() throws {
    try Self.loopbackCountsWhatIsSent(read: LinkCounters.read(interface:))
  }

  /// The same over one kept socket (``LinkCounters/Reader``), read three times, one read
  /// failing between: the socket made again after the failure reads as well.
  @Test("a reader's kept socket counts what is sent, also after a failed read")
  func readerCountsWhatIsSent() throws {
    let reader = LinkCounters.Reader()
    try Self.loopbackCountsWhatIsSent(read: reader.read(interface:))
    #expect(throws: LibnlError.self) { try reader.read(interface: "budgnone0") }
    try Self.loopbackCountsWhatIsSent(read: reader.read(interface:))
  }

  static func loopbackCountsWhatIsSent(read: (String) throws -> LinkCounters) throws {
    let before = try read("lo")
    let payload = [UInt8](repeating: 0x42, count: 10_000)
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(9).bigEndian  // discard: nobody needs to listen
    address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
    let sent = payload.withUnsafeBytes { bytes in
      withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(
            descriptor, bytes.baseAddress, bytes.count, 0, $0,
            socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    try #require(sent == payload.count)
    let after = try read("lo")
    // Other traffic on lo may add to it; the datagram (and its IP/UDP headers) must be there.
    #expect(after.sentBytes - before.sentBytes >= UInt64(payload.count))
    #expect(after.receivedBytes - before.receivedBytes >= UInt64(payload.count))
  }

  @Test func anUnknownLinkIsAnError() {
    #expect(throws: LibnlError.self) { try LinkCounters.read(interface: "budgnone0") }
  }
}
