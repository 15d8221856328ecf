import Foundation
import Nl80211
import Testing

/// Byte-built nl80211 datagrams (Fixtures/nl80211, see generate.py) through the parser and the
/// SSID tracker.
@Suite struct WifiIdentityTests {
  static let family: UInt16 = 30

  static func datagram(_ name: String) throws -> [UInt8] {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(6)  // Sources/Conditions/WifiIdentity/Tests/Nl80211Tests/…
    let path = parts.joined(separator: "/") + "/Fixtures/nl80211/\(name).bin"
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// Feeds fixtures in order; returns the tracker and every effect.
  static func feed(_ names: [String]) throws -> (WifiIdentityTracker, [WifiIdentityTracker.Effects])
  {
    var tracker = WifiIdentityTracker()
    var effects: [WifiIdentityTracker.Effects] = []
    for name in names {
      for result in Nl80211Parser.messages(in: try datagram(name), family: family) {
        effects.append(tracker.apply(try result.get()))
      }
    }
    return (tracker, effects)
  }

  @Test func interfaceDumpGivesTheSSIDOfAssociatedInterfacesOnly() throws {
    let (tracker, _) = try Self.feed(["get-interface-reply"])
    #expect(tracker.ssids == ["wlp2s0": "Pixel 7"])
    #expect(Nl80211Parser.endedRequests(in: try Self.datagram("get-interface-reply")) == [1])
  }

  @Test func connectWithSSIDTakesItAndStillRequeries() throws {
    let (tracker, effects) = try Self.feed([
      "get-interface-reply", "disconnect", "connect-with-ssid",
    ])
    #expect(tracker.ssids == ["wlp2s0": "iPhone de Ana"])
    #expect(effects.last?.requery == [3])
    #expect(effects.last?.changed == true)
  }

  @Test func connectWithoutSSIDAsksTheKernel() throws {
    let (tracker, effects) = try Self.feed(["get-interface-reply", "disconnect", "connect"])
    #expect(tracker.ssids.isEmpty)
    #expect(effects.last?.requery == [3])
    #expect(effects.last?.changed == false)
  }

  @Test func connectTakesTheSSIDFromTheAssociationRequestElements() throws {
    let (tracker, effects) = try Self.feed([
      "get-interface-reply", "disconnect", "connect-with-request-ies",
    ])
    #expect(tracker.ssids == ["wlp2s0": "Pixel-Hotspot"])
    #expect(effects.last?.changed == true)
  }

  @Test func interfaceReplyWithoutSSIDKeepsTheSSIDOfTheConnectEvent() throws {
    let (tracker, effects) = try Self.feed([
      "get-interface-reply", "disconnect", "connect-with-request-ies",
      "interface-reply-without-ssid",
    ])
    #expect(tracker.ssids == ["wlp2s0": "Pixel-Hotspot"])
    #expect(effects.last?.changed == false)
    let (afterDisconnect, _) = try Self.feed([
      "connect-with-request-ies", "interface-reply-without-ssid", "disconnect",
      "interface-reply-without-ssid",
    ])
    #expect(afterDisconnect.ssids.isEmpty)
  }

  @Test func roamToAnotherNetworkChangesTheSSID() throws {
    let (tracker, effects) = try Self.feed(["get-interface-reply", "roam"])
    #expect(tracker.ssids == ["wlp2s0": "Home-5G"])
    #expect(effects.last?.changed == true)
  }

  @Test func disconnectForgetsTheSSID() throws {
    let (tracker, effects) = try Self.feed(["get-interface-reply", "disconnect"])
    #expect(tracker.ssids.isEmpty)
    #expect(effects.last?.changed == true)
    #expect(effects.last?.requery == [])
  }

  @Test func eventsForUnknownInterfacesWaitForTheirName() throws {
    let (tracker, _) = try Self.feed(["connect-with-ssid"])
    #expect(tracker.ssids.isEmpty)
    let (named, _) = try Self.feed(["connect-with-ssid", "get-interface-reply"])
    #expect(named.ssids == ["wlp2s0": "Pixel 7"])
  }

  @Test func controlAndInvalidBytesInAnSSIDAreEscaped() throws {
    let (tracker, _) = try Self.feed(["odd-ssid-reply"])
    #expect(tracker.ssids == ["wlp2s0": "Café\\x1b[31m\\xff"])
  }

  @Test func oversizedSSIDIsAnErrorNamingIt() throws {
    let results = Nl80211Parser.messages(
      in: try Self.datagram("malformed-ssid"), family: Self.family)
    #expect(results.count == 1)
    #expect {
      try results[0].get()
    } throws: { error in
      "\(error)" == "SSID has 40 bytes"
    }
  }

  @Test func messagesOfOtherFamiliesAreIgnored() throws {
    #expect(Nl80211Parser.messages(in: try Self.datagram("roam"), family: 31).isEmpty)
  }

  @Test func truncatedDatagramIsReportedNotCrashed() throws {
    let bytes = try Self.datagram("roam")
    let claimed = (0..<4).reduce(0) { $0 | Int(bytes[$1]) << (8 * $1) }
    let results = Nl80211Parser.messages(in: Array(bytes.dropLast(8)), family: Self.family)
    #expect(results.count == 1)
    #expect(throws: Nl80211ParseError.self) { try results.first?.get() }
    let reasons = results.map { result in
      if case .failure(let error) = result { error.description } else { "decoded" }
    }
    #expect(reasons == ["netlink length \(claimed) at byte 0"])
  }

  @Test func getInterfaceRequestIsWellFormed() {
    let dump = Nl80211Request.getInterface(family: 30, sequence: 7, index: nil)
    #expect(dump == [20, 0, 0, 0, 30, 0, 0x01, 0x03, 7, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0])
    let one = Nl80211Request.getInterface(family: 30, sequence: 8, index: 3)
    #expect(one.count == 28)
    #expect(Array(one[20...]) == [8, 0, 3, 0, 3, 0, 0, 0])
  }

  @Test func liveSocketDegradesWithoutWireless() {
    // This VM's kernel has no nl80211; a machine with Wi-Fi gets a working socket.
    do {
      let socket = try Nl80211Socket()
      #expect(socket.family > 0)
    } catch {
      #expect(error.description.contains("nl80211"))
    }
  }
}
