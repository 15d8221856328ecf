import Reachability
import Testing

/// One classification rule, checked on a byte-built fixture (with its sysfs tree).
struct ClassificationCase: Sendable, CustomTestStringConvertible {
  var scenario: String
  var primary: String
  var type: LinkType
  var metered: Bool
  var reason: MeteredReason

  var testDescription: String { scenario }
}

@Suite struct MeteredClassificationTests {
  static let cases: [ClassificationCase] = [
    .init(
      scenario: "wwan-devtype", primary: "mdm0", type: .cellular, metered: true,
      reason: .wwanDevtype),
    .init(
      scenario: "wwan-rawip", primary: "rmnet_data0", type: .cellular, metered: true, reason: .rawIP
    ),
    .init(scenario: "ppp", primary: "ppp0", type: .cellular, metered: true, reason: .ppp),
    .init(
      scenario: "qmi-none", primary: "wwp0s20u4i4", type: .cellular, metered: true,
      reason: .noneWithoutKind),
    .init(
      scenario: "bluetooth", primary: "bnep0", type: .bluetooth, metered: true, reason: .bluetooth),
    .init(
      scenario: "usb-tethering-rndis", primary: "usb0", type: .tethered, metered: true,
      reason: .tetheringDriver("rndis_host")),
    .init(
      scenario: "usb-tethering-ipheth", primary: "eth1", type: .tethered, metered: true,
      reason: .tetheringDriver("ipheth")),
    .init(scenario: "wifi", primary: "wlp2s0", type: .wifi, metered: false, reason: .wifi),
    .init(scenario: "wired", primary: "enp3s0", type: .ethernet, metered: false, reason: .ethernet),
    .init(
      scenario: "name-hint-wwan", primary: "wwan0", type: .cellular, metered: true,
      reason: .nameHint("ww*")),
    .init(
      scenario: "wireguard-over-tethering", primary: "wg0", type: .tunnel, metered: true,
      reason: .tunnelInherits(from: "usb0")),
  ]

  @Test(arguments: cases)
  func primaryLinkIsClassifiedBySignal(_ expected: ClassificationCase) throws {
    let status = try FixtureReplay.status(expected.scenario)
    #expect(status.isReachable)
    #expect(status.primary == expected.primary)
    #expect(status.isDataMetered == expected.metered)
    let link = try #require(status.primaryLink)
    #expect(link.type == expected.type)
    #expect(link.meteredReason == expected.reason)
    #expect(link.hasDefaultRoute)
    #expect(status.links.first { $0.name == "lo" }?.type == .loopback)
  }

  @Test func sameFixtureWithoutSysfsFallsBackToWeakerSignals() throws {
    let configuration = ReachabilityConfiguration(sysfsRoot: "/nonexistent")
    let replay = try ReachabilityReplay.replay(
      pcapAt: "\(FixtureReplay.directory)/usb-tethering-rndis.pcap", configuration: configuration)
    #expect(replay.finalStatus.primaryLink?.meteredReason == .nameHint("usb*"))
    let wifi = try ReachabilityReplay.replay(
      pcapAt: "\(FixtureReplay.directory)/bluetooth.pcap", configuration: configuration)
    #expect(wifi.finalStatus.primaryLink?.meteredReason == .unknown)
    #expect(wifi.finalStatus.isDataMetered == false)
  }

  @Test func meteredOverrideBeatsWifi() throws {
    let status = try FixtureReplay.status("wifi", metered: ["wlp*"])
    #expect(status.isDataMetered)
    #expect(status.primaryLink?.meteredReason == .userOverride(pattern: "wlp*"))
    #expect(status.primaryLink?.type == .wifi)
  }

  @Test func unmeteredOverrideBeatsTetheringDriver() throws {
    let status = try FixtureReplay.status("usb-tethering-rndis", unmetered: ["usb[0-9]"])
    #expect(status.isDataMetered == false)
    #expect(status.primaryLink?.meteredReason == .userOverride(pattern: "usb[0-9]"))
  }

  @Test func meteredOverrideWinsOverUnmeteredOverride() throws {
    let status = try FixtureReplay.status("wired", metered: ["enp3s0"], unmetered: ["en*"])
    #expect(status.isDataMetered)
    #expect(status.primaryLink?.meteredReason == .userOverride(pattern: "enp3s0"))
  }

  @Test func tunnelFollowsAnUnmeteredUplinkWhenOverridden() throws {
    let status = try FixtureReplay.status("wireguard-over-tethering", unmetered: ["usb0"])
    #expect(status.primary == "wg0")
    #expect(status.isDataMetered == false)
    #expect(status.primaryLink?.meteredReason == .tunnelInherits(from: "usb0"))
  }
}
