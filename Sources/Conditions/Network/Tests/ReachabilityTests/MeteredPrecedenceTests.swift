import Netlink
import Reachability
import Testing

/// The precedence of metered signals: interface override > SSID override > NetworkManager
/// `yes`/`no` > kernel device signals > NetworkManager guesses > defaults.
@Suite struct MeteredPrecedenceTests {
  static let up = NetlinkConstant.interfaceUp | NetlinkConstant.interfaceLowerUp
  static let wifi = LinkInfo(
    family: 0, index: 3, name: "wlp2s0", flags: up, hardwareType: HardwareType.ethernet,
    kind: nil)
  static let wifiFacts = LinkFacts(deviceType: "wlan", isWireless: true, hasDevice: true)
  static let modem = LinkInfo(
    family: 0, index: 4, name: "wwan0", flags: up, hardwareType: HardwareType.rawIP, kind: nil)
  static let tunnel = LinkInfo(
    family: 0, index: 5, name: "wg0", flags: up, hardwareType: HardwareType.none,
    kind: "wireguard")

  @Test func interfaceOverrideBeatsSSIDOverrideAndNetworkManager() {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts,
      overrides: InterfaceOverrides(unmetered: ["wlp*"], meteredSSIDs: ["Pixel*"]),
      networkManager: .yes, ssid: "Pixel 7")
    #expect(result.isMetered == false)
    #expect(result.reason == .userOverride(pattern: "wlp*"))
  }

  @Test func ssidOverrideMarksAHotspotOverWifiMetered() {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts,
      overrides: InterfaceOverrides(meteredSSIDs: ["Pixel*", "iPhone*"]),
      networkManager: .no, ssid: "iPhone de Ana")
    #expect(result.type == .wifi)
    #expect(result.isMetered)
    #expect(result.reason == .ssidOverride(pattern: "iPhone*", ssid: "iPhone de Ana"))
    #expect(result.reason.code == "ssid-override:iPhone*")
  }

  @Test func meteredSSIDGlobsWinOverUnmeteredOnes() {
    let overrides = InterfaceOverrides(meteredSSIDs: ["Home-5G"], unmeteredSSIDs: ["Home*"])
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: overrides, ssid: "Home-5G")
    #expect(result.isMetered)
    let other = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: overrides, ssid: "Home-2G")
    #expect(!other.isMetered)
    #expect(other.reason == .ssidOverride(pattern: "Home*", ssid: "Home-2G"))
  }

  @Test func ssidOverrideNeedsAKnownSSID() {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: InterfaceOverrides(meteredSSIDs: ["*"]))
    #expect(result.reason == .wifi)
    #expect(!result.isMetered)
  }

  @Test(arguments: [NetworkManagerMetered.yes, .guessYes])
  func networkManagerMeteredWifiIsMetered(_ value: NetworkManagerMetered) {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: InterfaceOverrides(), networkManager: value)
    #expect(result.isMetered)
    #expect(result.reason == .networkManager(value))
    #expect(result.type == .wifi)
  }

  @Test func explicitNetworkManagerSettingBeatsKernelSignals() {
    let result = MeteredClassifier.classify(
      Self.modem, facts: .none, overrides: InterfaceOverrides(), networkManager: .no)
    #expect(!result.isMetered)
    #expect(result.reason == .networkManager(.no))
    #expect(result.type == .cellular)
  }

  @Test func kernelSignalsBeatNetworkManagerGuesses() {
    let result = MeteredClassifier.classify(
      Self.modem, facts: .none, overrides: InterfaceOverrides(), networkManager: .guessNo)
    #expect(result.isMetered)
    #expect(result.reason == .rawIP)
  }

  @Test func networkManagerGuessBeatsTheWifiDefault() {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: InterfaceOverrides(), networkManager: .guessNo)
    #expect(!result.isMetered)
    #expect(result.reason == .networkManager(.guessNo))
  }

  @Test func unknownNetworkManagerValueLeavesTheDefault() {
    let result = MeteredClassifier.classify(
      Self.wifi, facts: Self.wifiFacts, overrides: InterfaceOverrides(), networkManager: .unknown)
    #expect(result.reason == .wifi)
  }

  @Test func tunnelsIgnoreGuessesButHonourAnExplicitSetting() {
    let guessed = MeteredClassifier.classify(
      Self.tunnel, facts: .none, overrides: InterfaceOverrides(), networkManager: .guessYes)
    #expect(guessed.reason == .tunnelInherits(from: nil))
    let explicit = MeteredClassifier.classify(
      Self.tunnel, facts: .none, overrides: InterfaceOverrides(), networkManager: .yes)
    #expect(explicit.reason == .networkManager(.yes))
    #expect(explicit.isMetered)
  }

  @Test func networkManagerValuesMapFromTheDBusEnum() {
    #expect(
      (0...4).compactMap { NetworkManagerMetered(networkManagerValue: $0) } == [
        .unknown, .yes, .no, .guessYes, .guessNo,
      ])
    #expect(NetworkManagerMetered(networkManagerValue: 5) == nil)
    #expect(
      (0...4).compactMap { Connectivity(networkManagerValue: $0) } == [
        .unknown, .none, .portal, .limited, .full,
      ])
  }
}
