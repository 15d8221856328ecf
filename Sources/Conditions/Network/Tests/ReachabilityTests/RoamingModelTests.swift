import Testing

@testable import Reachability

/// ModemManager's roaming through the model (the Wi-Fi fixture's primary link `wlp2s0` stands
/// in for a modem's bearer), and why roaming is unknown for a cellular primary link.
@Suite struct RoamingModelTests {
  @Test func aRoamingLinkIsShownRoamingAndMetered() throws {
    var engine = try LinkHintsModelTests.engine()
    _ = engine.takePublishableStatus()
    engine.updateHints {
      $0.modemManagerRoaming = ["wlp2s0": true]
      $0.sources[.modemManager] = .answered
    }
    let published = engine.takePublishableStatus()
    let status = try #require(published)
    #expect(status.primaryLink?.isRoaming == true)
    #expect(status.primaryIsRoaming)
    #expect(status.isDataMetered)
    #expect(status.primaryLink?.meteredReason.code == "modemmanager:roaming")
    #expect(status.primaryLink?.isStale == false)
    #expect(status.links.first { $0.name == "lo" }?.isRoaming == nil)

    engine.updateHints { $0.sources[.modemManager] = .stale(since: 10) }
    #expect(engine.model.status().primaryLink?.isStale == true, "ModemManager's answer is stale")

    engine.updateHints {
      $0.modemManagerRoaming = ["wlp2s0": false]
      $0.sources[.modemManager] = .answered
    }
    let home = engine.model.status()
    #expect(home.primaryLink?.isRoaming == false)
    #expect(!home.primaryIsRoaming)
    #expect(!home.isDataMetered, "home: the other signals decide")
    #expect(home.primaryRoamingUnknown == nil)
  }

  @Test func roamingIsUnknownOnlyOnACellularPrimaryLinkModemManagerDoesNotKnow() {
    func status(type: LinkType, roaming: Bool?, source: HintSourceState?) -> NetworkStatus {
      var link = LinkStatus(
        name: "wwan0", index: 2, type: type, isUp: true, hasCarrier: true, isMetered: true,
        hasDefaultRoute: true, meteredReason: .wwanDevtype)
      link.isRoaming = roaming
      var status = NetworkStatus(
        isReachable: true, isDataMetered: true, primary: "wwan0", links: [link],
        malformedMessages: 0)
      status.sources[.modemManager] = source
      return status
    }
    #expect(
      status(type: .cellular, roaming: nil, source: .absent).primaryRoamingUnknown
        == "ModemManager not running")
    #expect(
      status(type: .cellular, roaming: nil, source: .answered).primaryRoamingUnknown
        == "ModemManager knows no modem on wwan0")
    #expect(status(type: .cellular, roaming: false, source: .answered).primaryRoamingUnknown == nil)
    #expect(status(type: .ethernet, roaming: nil, source: .absent).primaryRoamingUnknown == nil)
    #expect(status(type: .cellular, roaming: nil, source: nil).primaryRoamingUnknown != nil)
  }
}
