/// What sysfs says about one interface: the inputs of the metered classifier beyond netlink.
public struct LinkFacts: Sendable, Equatable {
  /// `DEVTYPE=` from `class/net/IF/uevent` (`wwan`, `wlan`, `bluetooth`, ...).
  public var deviceType: String?
  /// Basename of the `class/net/IF/device/driver` link (`rndis_host`, `ipheth`, `e1000e`, ...).
  public var driver: String?
  /// `class/net/IF/wireless` exists.
  public var isWireless: Bool
  /// `class/net/IF/device` exists: backed by hardware rather than purely virtual.
  public var hasDevice: Bool

  /// Creates facts; the defaults mean "sysfs knows nothing about this interface".
  public init(
    deviceType: String? = nil, driver: String? = nil, isWireless: Bool = false,
    hasDevice: Bool = false
  ) {
    self.deviceType = deviceType
    self.driver = driver
    self.isWireless = isWireless
    self.hasDevice = hasDevice
  }

  /// Nothing known.
  public static let none = LinkFacts()
}
