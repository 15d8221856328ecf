import Testing

@testable import Nl80211

/// `GET_SCAN` replies — one captured from Debian's 6.1 kernel under qemu with
/// mac80211_hwsim (Tests/wifi), the malformed ones built by generate.py — through the parser,
/// the SSID tracker and the dump queue.
@Suite struct ScanResultTests {
  /// The nl80211 family id of a captured datagram (the type of its first message).
  static func family(of bytes: [UInt8]) -> UInt16 {
    UInt16(bytes[4]) | UInt16(bytes[5]) << 8
  }

  static func decoded(_ name: String, family: UInt16 = WifiIdentityTests.family) throws
    -> [Nl80211Message]
  {
    try Nl80211Parser.messages(in: try WifiIdentityTests.datagram(name), family: family)
      .map { try $0.get() }
  }

  static func failure(_ name: String) throws -> String {
    let results = Nl80211Parser.messages(
      in: try WifiIdentityTests.datagram(name), family: WifiIdentityTests.family)
    #expect(results.count == 1)
    guard case .failure(let error) = results.first else { return "decoded" }
    return error.description
  }

  @Test func capturedScanDumpMarksTheAssociatedBSSAndItsSSID() throws {
    let bytes = try WifiIdentityTests.datagram("captured-get-scan-reply")
    let messages = try Self.decoded("captured-get-scan-reply", family: Self.family(of: bytes))
    #expect(messages.count == 2)
    #expect(messages.allSatisfy { $0.command == .newScanResults && $0.interfaceIndex != nil })
    let inUse = messages.compactMap(\.bss).filter(\.isInUse)
    #expect(inUse == [Nl80211BSS(status: .associated, ssid: Array("Pixel-Hotspot".utf8))])
    let seen = messages.compactMap(\.bss).filter { !$0.isInUse }
    #expect(seen == [Nl80211BSS(status: nil, ssid: nil)])
    #expect(Nl80211Parser.endedRequests(in: bytes).count == 1)
  }

  @Test func capturedInterfaceReplyThenScanDumpGiveTheSSID() throws {
    let interfaceBytes = try WifiIdentityTests.datagram("captured-get-interface-reply")
    let scanBytes = try WifiIdentityTests.datagram("captured-get-scan-reply")
    let family = Self.family(of: interfaceBytes)
    var tracker = WifiIdentityTracker()
    let reply = try #require(
      try Self.decoded("captured-get-interface-reply", family: family).first)
    #expect(reply.ssid == nil)  // Linux 6.1 leaves it out: why GET_SCAN is needed
    let effects = tracker.apply(reply)
    let index = try #require(reply.interfaceIndex)
    #expect(effects.scan == [index])
    tracker.beginScan(index: index)
    for message in try Self.decoded("captured-get-scan-reply", family: family) {
      #expect(tracker.apply(message) == .init())
    }
    let ended = tracker.endScan(index: index)
    #expect(ended.changed)
    #expect(tracker.ssids == ["wlan0": "Pixel-Hotspot"])
    #expect(Self.family(of: scanBytes) == family)
  }

  @Test func beaconElementsGiveTheSSIDWhenTheProbeResponseHasNone() throws {
    let bss = try #require(try Self.decoded("scan-reply-beacon-ssid").first?.bss)
    #expect(bss == Nl80211BSS(status: .associated, ssid: Array("Cafe-Guest".utf8)))
  }

  @Test func scanWithoutABSSInUseClearsTheSSID() throws {
    var tracker = WifiIdentityTracker()
    for message in try Self.decoded("get-interface-reply")
      + Self.decoded("connect-with-request-ies")
    {
      _ = tracker.apply(message)
    }
    #expect(tracker.ssids == ["wlp2s0": "Pixel-Hotspot"])
    let reply = try #require(try Self.decoded("interface-reply-without-ssid").first)
    #expect(tracker.apply(reply).scan == [3])
    #expect(tracker.ssids == ["wlp2s0": "Pixel-Hotspot"])  // kept until the scan answers
    tracker.beginScan(index: 3)
    for message in try Self.decoded("scan-reply-not-associated") {
      #expect(message.bss?.status == nil)
      #expect(message.bss?.ssid == nil)  // elements of a BSS not in use are not decoded
      _ = tracker.apply(message)
    }
    #expect(tracker.endScan(index: 3).changed)
    #expect(tracker.ssids.isEmpty)
  }

  @Test func anEventDuringTheScanWinsOverItsOlderAnswer() throws {
    var tracker = WifiIdentityTracker()
    _ = tracker.apply(try #require(try Self.decoded("interface-reply-without-ssid").first))
    tracker.beginScan(index: 3)
    for message in try Self.decoded("scan-reply-not-associated") { _ = tracker.apply(message) }
    _ = tracker.apply(try #require(try Self.decoded("connect-with-request-ies").first))
    #expect(tracker.endScan(index: 3) == .init())
    #expect(tracker.ssids == ["wlp2s0": "Pixel-Hotspot"])
  }

  @Test func accessPointInterfacesAreNotScanned() {
    var tracker = WifiIdentityTracker()
    let accessPoint = Nl80211Message(
      command: .newInterface, interfaceIndex: 5, interfaceName: "wlan1", interfaceType: 3)
    #expect(tracker.apply(accessPoint).scan.isEmpty)
    let station = Nl80211Message(
      command: .newInterface, interfaceIndex: 4, interfaceName: "wlan0", interfaceType: 2)
    #expect(tracker.apply(station).scan == [4])
  }

  @Test(arguments: [
    ("scan-reply-truncated-nest", "attribute 6 has length 40 at 0 in BSS"),
    ("scan-reply-short-status", "BSS status has 2 bytes"),
    ("scan-reply-truncated-element", "BSS information elements: element truncated at byte 6"),
    ("scan-reply-long-ssid-element", "BSS information elements: SSID element has 33 bytes"),
  ])
  func malformedScanRepliesAreErrorsNamingTheFault(fixture: String, reason: String) throws {
    #expect(try Self.failure(fixture) == reason)
  }

  @Test func getScanRequestIsADumpOfOneInterface() {
    let request = Nl80211Request.getScan(family: 30, sequence: 9, index: 3)
    #expect(
      request == [
        28, 0, 0, 0, 30, 0, 0x01, 0x03, 9, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0, 8, 0, 3, 0, 3, 0, 0, 0,
      ])
  }

  @Test func dumpsGoOutOneAtATimeAndEndOnTheirOwnSequence() {
    var queue = Nl80211DumpQueue()
    queue.enqueue(.interfaces)
    queue.enqueue(.scan(interfaceIndex: 3))
    queue.enqueue(.scan(interfaceIndex: 3))
    #expect(queue.next() == .interfaces)
    #expect(queue.next() == nil)  // one running
    queue.sent(sequence: 1)
    #expect(queue.ended(sequence: 7) == nil)  // the error of a single request
    #expect(queue.ended(sequence: 1) == .interfaces)
    #expect(queue.next() == .scan(interfaceIndex: 3))
    queue.sent(sequence: 2)
    queue.enqueue(.scan(interfaceIndex: 3))  // asked again while running: queued once more
    #expect(queue.ended(sequence: 2) == .scan(interfaceIndex: 3))
    #expect(queue.next() == .scan(interfaceIndex: 3))
    queue.sent(sequence: 3)
    #expect(!queue.isIdle)
    #expect(queue.ended(sequence: 3) == .scan(interfaceIndex: 3))
    #expect(queue.isIdle)
  }
}
