import Glibc
import Netlink
import Reachability
import Testing

/// Captures carry the sysfs facts the classifier used, so a replay anywhere gives the capturing
/// machine's answer; old pcap files still take them from `--sysfs-root`.
@Suite struct LinkFactsCaptureTests {
  @Test func factsRecordedInThePcapngWinOverTheReplayingMachinesSysfs() throws {
    // Rewrite the wwan fixture as pcapng with the facts its sysfs tree gave, then replay it
    // against an empty sysfs: the recorded DEVTYPE=wwan must still make it metered.
    let records = try PcapReader.records(
      atPath: "\(FixtureReplay.directory)/wwan-devtype.pcap")
    let path = "/tmp/backgrounder-facts-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pcapng"
    defer { unlink(path) }
    let sysfs = SysfsLinkFactsReader(root: "\(FixtureReplay.directory)/wwan-devtype/sysfs")
    let writer = try PcapWriter(path: path)
    var described: Set<String> = []
    for record in records {
      var comments: [String] = []
      for frame in NetlinkFraming.frames(in: record.message) {
        guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
          case .link(let link, .new) = message.payload, described.insert(link.name).inserted
        else { continue }
        comments.append(
          LinkFactsComment.encode(
            name: link.name, facts: sysfs.facts(forInterface: link.name).facts))
      }
      try writer.write(
        record.message, direction: record.direction,
        timestampMicroseconds: record.timestampMicroseconds, comments: comments)
    }
    try writer.close()
    let elsewhere = ReachabilityConfiguration(sysfsRoot: "/nonexistent")
    let replayed = try ReachabilityReplay.replay(pcapAt: path, configuration: elsewhere)
    let original = try FixtureReplay.status("wwan-devtype")
    #expect(original.isDataMetered)
    #expect(replayed.finalStatus == original)
    let withoutFacts = try ReachabilityReplay.replay(
      pcapAt: "\(FixtureReplay.directory)/wwan-devtype.pcap", configuration: elsewhere)
    #expect(!withoutFacts.finalStatus.isDataMetered, "an old pcap needs --sysfs-root")
  }

  @Test func factsCommentRoundTripsOddValues() {
    let facts = LinkFacts(
      deviceType: "wwan", driver: "odd driver=%", isWireless: true, hasDevice: true)
    let comment = LinkFactsComment.encode(name: "wwan0", facts: facts)
    #expect(comment.hasPrefix("backgrounder-link-facts name=wwan0 devtype=wwan driver=odd%20"))
    #expect(LinkFactsComment.decode(comment)?.facts == facts)
    #expect(LinkFactsComment.decode("backgrounder-link-facts name=x driver=%G1") == nil)
    #expect(LinkFactsComment.decode("a comment someone typed") == nil)
  }
}
