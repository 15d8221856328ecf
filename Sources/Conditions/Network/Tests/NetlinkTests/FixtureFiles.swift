import Netlink

/// Paths of the files in Fixtures/netlink.
enum FixtureFiles {
  static let directory: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(6)  // Sources/Conditions/Network/Tests/NetlinkTests/FixtureFiles.swift
    return parts.joined(separator: "/") + "/Fixtures/netlink"
  }()

  static func pcap(_ name: String) -> String { "\(directory)/\(name).pcap" }

  /// Every netlink message of the fixture, cut out of its datagrams.
  static func messages(_ name: String) throws -> [ArraySlice<UInt8>] {
    try PcapReader.records(atPath: pcap(name)).flatMap { record in
      NetlinkFraming.frames(in: record.message).compactMap { try? $0.get() }
    }
  }
}
