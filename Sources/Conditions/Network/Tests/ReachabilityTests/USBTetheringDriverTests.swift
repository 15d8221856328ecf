import Netlink
import Reachability
import Testing

/// A USB network link is classified by the host driver bound to it: a phone's tethering
/// functions (RNDIS, NCM, Apple's) are metered, a USB ethernet adapter (ECM and vendor
/// drivers) is not. The same links appear for real under qemu in `Tests/wifi` (dummy_hcd
/// gadgets).
@Suite struct USBTetheringDriverTests {
  static let link = LinkInfo(
    family: 0, index: 7, name: "usb0",
    flags: NetlinkConstant.interfaceUp | NetlinkConstant.interfaceLowerUp,
    hardwareType: HardwareType.ethernet, kind: nil)

  static func classify(driver: String) -> MeteredClassifier.Classification {
    MeteredClassifier.classify(
      link, facts: LinkFacts(driver: driver, hasDevice: true), overrides: InterfaceOverrides())
  }

  @Test(arguments: ["rndis_host", "cdc_ncm", "ipheth"])
  func tetheringDriversAreMetered(_ driver: String) {
    let result = Self.classify(driver: driver)
    #expect(result.type == .tethered)
    #expect(result.isMetered)
    #expect(result.reason == .tetheringDriver(driver))
    #expect(result.reason.code == "tethering-driver:\(driver)")
  }

  @Test(arguments: ["cdc_ether", "r8152", "ax88179_178a"])
  func usbEthernetAdaptersAreNot(_ driver: String) {
    let result = Self.classify(driver: driver)
    #expect(result.type == .ethernet)
    #expect(!result.isMetered)
    #expect(result.reason == .ethernet)
  }
}
