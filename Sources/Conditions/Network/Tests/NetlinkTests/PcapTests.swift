import Foundation
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

  @Test func writesPcapngWithCommentsAndDirectionThatTsharkReads() throws {
    let path = temporaryPath()
    defer { unlink(path) }
    let writer = try PcapWriter(path: path)
    try writer.write(
      [9, 8, 7], direction: .incoming, timestampMicroseconds: 1_700_000_002_000_001,
      comments: ["first note", "second note"])
    try writer.close()
    let bytes = try #require(readAll(path))
    #expect(bytes.prefix(4) == [0x0A, 0x0D, 0x0D, 0x0A], "a pcapng section header first")
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    let records = try PcapReader.records(atPath: path)
    #expect(
      records == [
        PcapRecord(
          timestampMicroseconds: 1_700_000_002_000_001, direction: .incoming, message: [9, 8, 7],
          comments: ["first note", "second note"])
      ])
    guard access("/usr/bin/tshark", X_OK) == 0 else {
      print("tshark not installed: pcapng compatibility with Wireshark not checked")
      return
    }
    let output = try run("/usr/bin/tshark", ["-r", path, "-T", "fields", "-e", "frame.comment"])
    #expect(output.contains("first note"), "tshark printed: \(output)")
  }

  @Test func pcapngWithAnotherLinkTypeOrABadBlockLengthIsRejected() throws {
    let path = temporaryPath()
    defer { unlink(path) }
    try PcapWriter(path: path).close()
    var bytes = try #require(readAll(path))
    let interfaceBlock = Int(bytes[4]) | Int(bytes[5]) << 8  // section header length
    bytes[interfaceBlock + 8] = 1  // LINKTYPE_ETHERNET
    let wrongType = #expect(throws: PcapError.self) { try PcapReader.records(in: bytes) }
    #expect(wrongType?.reason.contains("link type 1, expected 253") == true)
    bytes[interfaceBlock + 8] = 253
    bytes[interfaceBlock + 4] = 13
    let badLength = #expect(throws: PcapError.self) { try PcapReader.records(in: bytes) }
    #expect(badLength?.reason.contains("block 2: length 13") == true)
  }

  private func readAll(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = fread(&chunk, 1, chunk.count, file)
      if count == 0 { return bytes }
      bytes += chunk[0..<count]
    }
  }

  private func run(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
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
