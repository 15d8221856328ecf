import Reachability
import Testing

/// Which connectivity the status reports: NetworkManager's per-device value, then its global
/// value, then the probe's answer for the current primary link.
@Suite struct ConnectivityHintsTests {
  @Test func nothingKnownIsUnknown() {
    let (value, source) = LinkHints().connectivity(primary: "wlp2s0")
    #expect(value == .unknown)
    #expect(source == nil)
  }

  @Test func networkManagersDeviceValueBeatsItsGlobalValue() {
    var hints = LinkHints()
    hints.networkManagerConnectivity = .full
    hints.networkManagerDeviceConnectivity = ["wlp2s0": .portal]
    #expect(hints.connectivity(primary: "wlp2s0") == (.portal, .networkManager))
    #expect(hints.connectivity(primary: "enp3s0") == (.full, .networkManager))
  }

  @Test func networkManagerBeatsTheProbe() {
    var hints = LinkHints()
    hints.probe = ("wlp2s0", .full)
    hints.networkManagerConnectivity = .limited
    #expect(hints.connectivity(primary: "wlp2s0") == (.limited, .networkManager))
  }

  @Test func probeAnswerCountsOnlyForTheLinkItWasMadeOver() {
    var hints = LinkHints()
    hints.probe = ("wlp2s0", .portal)
    #expect(hints.connectivity(primary: "wlp2s0") == (.portal, .probe))
    #expect(hints.connectivity(primary: "enp3s0") == (.unknown, nil))
  }

  @Test func onlyKnownBrokenConnectivityBlocksWork() {
    #expect(Connectivity.allCases.filter(\.blocksNetworkWork) == [.none, .portal, .limited])
  }
}
