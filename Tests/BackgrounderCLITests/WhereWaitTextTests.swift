import Backgrounder
import Foundation
import Testing

@testable import BackgrounderCLI

/// The WAITING FOR column of `status` for the where-constraints (`ssids`, `interfaces`,
/// `requires-mount`).
@Suite struct WhereWaitTextTests {
  @Test func namesWhatIsAwaitedAndWhatIsThereNow() {
    let now = Date()
    #expect(
      TaskStatusText.waitingFor(
        [.wifiNetwork(allowed: ["Home*"], current: "Pixel-Hotspot")], now: now)
        == "Wi-Fi network Home* (now: Pixel-Hotspot)")
    #expect(
      TaskStatusText.waitingFor(
        [.wifiNetwork(allowed: ["Home*", "Office-WiFi"], current: nil)], now: now)
        == "Wi-Fi network Home*, Office-WiFi (now: not on Wi-Fi)")
    #expect(
      TaskStatusText.waitingFor(
        [.networkInterface(allowed: ["eth*", "enp*"], current: "wlan0")], now: now)
        == "interface eth*, enp* (now: wlan0)")
    #expect(
      TaskStatusText.waitingFor([.mounted(path: "/media/backup"), .requiresCharging], now: now)
        == "/media/backup to be mounted, charger")
    #expect(
      TaskStatusText.waitingFor(
        [.notRoaming(roamingUnknown: "ModemManager not running")], now: now)
        == "a network that is not roaming (roaming unknown: ModemManager not running)")
    #expect(
      TaskStatusText.waitingFor([.notRoaming(roamingUnknown: nil)], now: now)
        == "a network that is not roaming")
    #expect(
      TaskStatusText.waitingFor(
        [.reachable(destination: "nas.lan:445", failure: .refused)], now: now)
        == "nas.lan:445 to be reachable (connection refused)")
    #expect(
      TaskStatusText.waitingFor([.reachable(destination: "[::1]:445", failure: nil)], now: now)
        == "[::1]:445 to be reachable (not checked yet)")
  }
}
