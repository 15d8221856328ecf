import Glibc
import Netlink
import Testing

@Suite struct PcapTests {
  private func temporaryPath() -> String {
    "/tmp/backgrounder-pcap-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pcap"
  }

  @Test func writtenRecordsReadBackUnchanged() throws {
    let path = temporaryPath()
    defer { unlink(path) }
    let writer = try PcapWriter(path: path)
    let request = DumpRequest.message(for: .route, sequence: 7)
    try writer.write(request, direction: .outgoing, timestampMicroseconds: 1_700_000_000_123_456)
    try writer.write([1, 2, 3], direction: .incoming, timestampMicroseconds: 1_700_000_001_000_000)
    try writer.close()
    let records = try PcapReader.records(atPath: path)
    #expect(
      records == [
        PcapRecord(
          timestampMicroseconds: 1_700_000_000_123_456, direction: .outgoing, message: request),
        PcapRecord(
          timestampMicroseconds: 1_700_000_001_000_000, direction: .incoming, message: [1, 2, 3]),
      ])
    #expect(throws: (any Error).self) { try writer.write([0], direction: .incoming) }
  }

  @Test func truncatedFileNamesTheRecord() {
    let error = #expect(throws: PcapError.self) {
      try PcapReader.records(atPath: FixtureFiles.pcap("corrupt-truncated"))
    }
    #expect(error?.reason.hasPrefix("record 11: truncated") == true)
  }

  @Test func nonPcapFileIsRejected() {
    let error = #expect(throws: PcapError.self) {
      try PcapReader.records(atPath: FixtureFiles.pcap("corrupt-not-pcap"))
    }
    #expect(error?.reason.contains("not a pcap file") == true)
  }

  @Test func missingFileIsRejected() {
    let error = #expect(throws: PcapError.self) {
      try PcapReader.records(atPath: "/nonexistent/capture.pcap")
    }
    #expect(error?.reason.contains("/nonexistent/capture.pcap") == true)
  }

  @Test func otherLinkTypesAndShortHeadersAreRejected() {
    var header: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0] + [UInt8](repeating: 0, count: 12)
    header += [1, 0, 0, 0]  // LINKTYPE_ETHERNET
    let wrongType = #expect(throws: PcapError.self) { try PcapReader.records(in: header) }
    #expect(wrongType?.reason == "link type 1, expected 253 (LINKTYPE_NETLINK)")
    let short = #expect(throws: PcapError.self) { try PcapReader.records(in: [0xD4, 0xC3]) }
    #expect(short?.reason.contains("file header truncated") == true)
  }
}
