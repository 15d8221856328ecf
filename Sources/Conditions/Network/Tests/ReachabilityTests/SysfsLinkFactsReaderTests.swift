import Reachability
import Testing

@Suite struct SysfsLinkFactsReaderTests {
  private let reader = SysfsLinkFactsReader(root: "\(FixtureReplay.directory)/wifi/sysfs")

  @Test func readsDevtypeDriverAndWireless() {
    let lookup = reader.facts(forInterface: "wlp2s0")
    #expect(
      lookup.facts
        == LinkFacts(deviceType: "wlan", driver: "iwlwifi", isWireless: true, hasDevice: true))
    #expect(lookup.warnings.isEmpty)
  }

  @Test func unknownInterfaceHasNoFacts() {
    #expect(reader.facts(forInterface: "eth9").facts == .none)
  }

  @Test func namesThatWouldEscapeTheTreeAreRefused() {
    let lookup = reader.facts(forInterface: "../../etc")
    #expect(lookup.facts == .none)
    #expect(lookup.warnings.count == 1)
  }
}
