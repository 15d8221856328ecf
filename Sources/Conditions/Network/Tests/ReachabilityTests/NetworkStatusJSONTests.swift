import Foundation
import Reachability
import Testing

@Suite struct NetworkStatusJSONTests {
  private func object(_ status: NetworkStatus) throws -> [String: Any] {
    let data = try JSONEncoder().encode(status)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
  }

  @Test func usesTheDocumentedKeys() throws {
    let json = try object(try FixtureReplay.status("wireguard-over-tethering"))
    #expect(
      Set(json.keys) == [
        "reachable", "metered", "primary", "connectivity", "connectivitySource", "links",
        "malformedMessages", "netlinkOverruns",
      ])
    #expect(json["netlinkOverruns"] as? Int == 0)
    #expect(json["connectivity"] as? String == "unknown")
    #expect(json["connectivitySource"] is NSNull)
    let links = try #require(json["links"] as? [[String: Any]])
    #expect(
      Set(links[0].keys)
        == ["name", "index", "type", "up", "carrier", "metered", "defaultRoute", "meteredReason"])
    #expect(json["primary"] as? String == "wg0")
    #expect(links.last?["meteredReason"] as? String == "tunnel-inherits:usb0")
  }

  @Test func ssidAndConnectivityAreEncodedWhenKnown() throws {
    let wifi = LinkStatus(
      name: "wlp2s0", index: 3, type: .wifi, isUp: true, hasCarrier: true, isMetered: true,
      hasDefaultRoute: true, meteredReason: .ssidOverride(pattern: "Pixel*", ssid: "Pixel 7"),
      ssid: "Pixel 7")
    let json = try object(
      NetworkStatus(
        isReachable: true, isDataMetered: true, primary: "wlp2s0", links: [wifi],
        malformedMessages: 0, connectivity: .portal, connectivitySource: .networkManager))
    #expect(json["connectivity"] as? String == "portal")
    #expect(json["connectivitySource"] as? String == "NetworkManager")
    let links = try #require(json["links"] as? [[String: Any]])
    #expect(links[0]["ssid"] as? String == "Pixel 7")
    #expect(links[0]["meteredReason"] as? String == "ssid-override:Pixel*")
  }

  @Test func absentPrimaryIsNull() throws {
    let json = try object(.unknown)
    #expect(json["primary"] is NSNull)
    #expect(json["reachable"] as? Bool == false)
  }
}
