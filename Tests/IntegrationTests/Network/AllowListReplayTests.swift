import Backgrounder
import BackgrounderLinux
import Netlink
import TestSupport
import Testing

@testable import Reachability

/// `ssids` / `interfaces` on replayed rtnetlink captures: the runtime's conditions come from the
/// monitor's status as the daemon builds them (``MonitoredNetwork``), the SSID from the nl80211
/// hint of the primary link only.
@Suite(.blockingIO) struct AllowListReplayTests {
  static let fixtures: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)  // Tests/IntegrationTests/Network/AllowListReplayTests.swift
    return parts.joined(separator: "/") + "/Fixtures/netlink"
  }()

  /// The engine after the capture, or at the first status `stop` accepts.
  static func engine(
    _ capture: String, ssids: [String: String] = [:],
    stop: (NetworkStatus) -> Bool = { _ in false }
  ) throws -> ReachabilityEngine {
    let configuration = ReachabilityConfiguration(sysfsRoot: "\(fixtures)/\(capture)/sysfs")
    var engine = ReachabilityEngine(configuration: configuration, live: false)
    engine.updateHints { $0.ssids = ssids }
    for record in try PcapReader.records(atPath: "\(fixtures)/\(capture).pcap")
    where record.netlinkProtocol == 0 {
      _ = engine.ingest(datagram: record.message)
      if stop(engine.status) { break }
    }
    return engine
  }

  static let home = NetworkAllowList(ssids: ["Home*", "Office-WiFi"])

  @Test("Wi-Fi capture: an allowed network and one that is not")
  func wifiCapture() throws {
    var engine = try Self.engine("wifi")
    engine.updateHints { $0.ssids = ["wlp2s0": "Pixel-Hotspot"] }
    let hotspot = MonitoredNetwork.conditions(engine.status)
    #expect(hotspot.primaryLink == "wlp2s0")
    #expect(hotspot.primarySSID == "Pixel-Hotspot")
    #expect(
      Self.home.unmet(by: hotspot)
        == .wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: "Pixel-Hotspot"))
    engine.updateHints { $0.ssids = ["wlp2s0": "Home-5G"] }
    #expect(Self.home.unmet(by: MonitoredNetwork.conditions(engine.status)) == nil)
    #expect(
      NetworkAllowList(interfaces: ["eth*", "enp*"]).unmet(
        by: MonitoredNetwork.conditions(engine.status))
        == .networkInterface(allowed: ["eth*", "enp*"], current: "wlp2s0"))
  }

  @Test("wired and Wi-Fi capture: the SSID of a link that is not primary does not count")
  func wiredPrimary() throws {
    // While the wired link is primary (the capture later takes it down).
    let engine = try Self.engine("wired-and-wifi", ssids: ["wlp2s0": "Home-5G"]) {
      $0.primary == "enp3s0"
    }
    let conditions = MonitoredNetwork.conditions(engine.status)
    #expect(conditions.primaryLink == "enp3s0")
    #expect(conditions.primarySSID == nil)
    #expect(
      Self.home.unmet(by: conditions)
        == .wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: nil))
    #expect(NetworkAllowList(interfaces: ["eth*", "enp*"]).unmet(by: conditions) == nil)
  }
}
