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
    #expect(Set(json.keys) == ["reachable", "metered", "primary", "links", "malformedMessages"])
    let links = try #require(json["links"] as? [[String: Any]])
    #expect(
      Set(links[0].keys)
        == ["name", "index", "type", "up", "carrier", "metered", "defaultRoute", "meteredReason"])
    #expect(json["primary"] as? String == "wg0")
    #expect(links.last?["meteredReason"] as? String == "tunnel-inherits:usb0")
  }

  @Test func absentPrimaryIsNull() throws {
    let json = try object(.unknown)
    #expect(json["primary"] is NSNull)
    #expect(json["reachable"] as? Bool == false)
  }
}
