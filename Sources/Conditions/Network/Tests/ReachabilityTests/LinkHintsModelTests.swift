import Netlink
import Testing

@testable import Reachability

/// Link hints through the model, on the byte-built Wi-Fi fixture (primary `wlp2s0`).
@Suite struct LinkHintsModelTests {
  static func engine(meteredSSIDs: [String] = []) throws -> ReachabilityEngine {
    let configuration = ReachabilityConfiguration(
      sysfsRoot: "\(FixtureReplay.directory)/wifi/sysfs", meteredSSIDs: meteredSSIDs)
    var engine = ReachabilityEngine(configuration: configuration, live: false)
    for record in try PcapReader.records(atPath: "\(FixtureReplay.directory)/wifi.pcap")
    where record.netlinkProtocol == 0 {
      _ = engine.ingest(datagram: record.message)
    }
    return engine
  }

  @Test func hotspotSSIDFromTheConfigMakesTheWifiLinkMetered() throws {
    var engine = try Self.engine(meteredSSIDs: ["Pixel*", "iPhone*"])
    let initial = engine.takePublishableStatus()
    #expect(initial?.isDataMetered == false)
    engine.updateHints { $0.ssids = ["wlp2s0": "Pixel 7"] }
    let published = engine.takePublishableStatus()
    let status = try #require(published)
    #expect(status.isDataMetered)
    #expect(status.primaryLink?.ssid == "Pixel 7")
    #expect(status.primaryLink?.meteredReason == .ssidOverride(pattern: "Pixel*", ssid: "Pixel 7"))
    engine.updateHints { $0.ssids = ["wlp2s0": "Home"] }
    let publishedHome = engine.takePublishableStatus()
    let home = try #require(publishedHome)
    #expect(!home.isDataMetered)
    #expect(home.primaryLink?.meteredReason == .wifi)
  }

  @Test func networkManagerHintsChangeThePublishedStatus() throws {
    var engine = try Self.engine()
    _ = engine.takePublishableStatus()
    engine.updateHints {
      $0.networkManagerMetered = ["wlp2s0": .guessYes]
      $0.networkManagerConnectivity = .portal
    }
    let published = engine.takePublishableStatus()
    let status = try #require(published)
    #expect(status.isDataMetered)
    #expect(status.primaryLink?.meteredReason == .networkManager(.guessYes))
    #expect(status.connectivity == .portal)
    #expect(status.connectivitySource == .networkManager)
    engine.updateHints { $0.networkManagerConnectivity = .portal }
    let again = engine.takePublishableStatus()
    #expect(again == nil)  // nothing changed: nothing published
  }

  @Test func ssidIsShownForWifiLinksOnly() throws {
    var engine = try Self.engine()
    engine.updateHints { $0.ssids = ["wlp2s0": "Pixel 7", "lo": "not wifi"] }
    let status = engine.model.status()
    #expect(status.links.first { $0.name == "wlp2s0" }?.ssid == "Pixel 7")
    #expect(status.links.first { $0.name == "lo" }?.ssid == nil)
  }
}
