import Netlink

/// Decides a link's type and metered state from netlink and sysfs facts, most specific signal
/// first. Pure: no I/O.
public enum MeteredClassifier {
  /// The classifier's answer for one link. Tunnels get ``MeteredReason/tunnelInherits(from:)``
  /// with no uplink; the model fills in the uplink's state.
  public struct Classification: Sendable, Equatable {
    /// The link's type.
    public var type: LinkType
    /// Whether the link is metered (for tunnels: before inheritance).
    public var isMetered: Bool
    /// The deciding signal.
    public var reason: MeteredReason
  }

  /// Link kinds that are tunnels: their traffic leaves through another link.
  static let tunnelKinds: Set<String> = [
    "wireguard", "tun", "ovpn", "gre", "gretap", "ip6gre", "ip6gretap", "ipip", "ip6tnl", "sit",
    "vti", "vti6", "xfrm", "ipsec",
  ]
  /// USB host drivers of a phone's tethering functions: RNDIS (Android), NCM (newer Android,
  /// the kernel's own NCM gadget) and Apple's. Not `cdc_ether` (ECM): USB ethernet adapters
  /// and docks use it.
  static let tetheringDrivers: Set<String> = ["rndis_host", "cdc_ncm", "ipheth"]
  private static let nameHints: [(pattern: String, type: LinkType, metered: Bool)] = [
    ("ww*", .cellular, true), ("rmnet*", .cellular, true), ("ppp*", .cellular, true),
    ("usb*", .tethered, true), ("wl*", .wifi, false), ("en*", .ethernet, false),
    ("eth*", .ethernet, false),
  ]

  /// Classifies `link` given its sysfs `facts`, the user's `overrides`, and what
  /// NetworkManager (`networkManager`) and nl80211 (`ssid`) say about it. Precedence, most
  /// specific first: interface-name override > SSID override > NetworkManager `yes`/`no` >
  /// kernel device signals > NetworkManager `guess-yes`/`guess-no` > Wi-Fi/ethernet/unknown
  /// defaults. Tunnels inherit from their uplink unless an override or an explicit
  /// NetworkManager setting names them.
  public static func classify(
    _ link: LinkInfo, facts: LinkFacts, overrides: InterfaceOverrides,
    networkManager: NetworkManagerMetered = .unknown, ssid: String? = nil
  ) -> Classification {
    var result = classifyBySignals(link, facts: facts)
    if result.type == .loopback { return result }
    if let decision = overrides.decision(forInterface: link.name) {
      result.isMetered = decision.metered
      result.reason = .userOverride(pattern: decision.pattern)
    } else if let ssid, let decision = overrides.decision(forSSID: ssid) {
      result.isMetered = decision.metered
      result.reason = .ssidOverride(pattern: decision.pattern, ssid: ssid)
    } else if let metered = networkManager.explicitValue {
      result.isMetered = metered
      result.reason = .networkManager(networkManager)
    } else if let metered = networkManager.guessedValue, !isKernelSignal(result.reason),
      result.type != .tunnel
    {
      result.isMetered = metered
      result.reason = .networkManager(networkManager)
    }
    return result
  }

  /// Whether `reason` is one of the kernel's device signals (modem, PPP, Bluetooth, tethering),
  /// which outrank NetworkManager's guesses.
  static func isKernelSignal(_ reason: MeteredReason) -> Bool {
    switch reason {
    case .wwanDevtype, .rawIP, .ppp, .noneWithoutKind, .bluetooth, .tetheringDriver: true
    default: false
    }
  }

  private static func classifyBySignals(_ link: LinkInfo, facts: LinkFacts) -> Classification {
    let metered = { (type: LinkType, reason: MeteredReason) in
      Classification(type: type, isMetered: true, reason: reason)
    }
    let unmetered = { (type: LinkType, reason: MeteredReason) in
      Classification(type: type, isMetered: false, reason: reason)
    }
    if link.isLoopback { return unmetered(.loopback, .loopback) }
    if facts.deviceType == "wwan" { return metered(.cellular, .wwanDevtype) }
    if link.hardwareType == HardwareType.rawIP { return metered(.cellular, .rawIP) }
    if link.hardwareType == HardwareType.ppp { return metered(.cellular, .ppp) }
    if link.hardwareType == HardwareType.none && link.kind == nil {
      return metered(.cellular, .noneWithoutKind)
    }
    if facts.deviceType == "bluetooth" { return metered(.bluetooth, .bluetooth) }
    if let driver = facts.driver, tetheringDrivers.contains(driver) {
      return metered(.tethered, .tetheringDriver(driver))
    }
    if isTunnel(link) { return unmetered(.tunnel, .tunnelInherits(from: nil)) }
    if let kind = link.kind { return unmetered(.virtual, .virtual(kind: kind)) }
    if facts.deviceType == "wlan" || facts.isWireless || link.hardwareType == HardwareType.ieee80211
    {
      return unmetered(.wifi, .wifi)
    }
    if link.hardwareType == HardwareType.ethernet && facts.hasDevice {
      return unmetered(.ethernet, .ethernet)
    }
    if !facts.hasDevice,
      let hint = nameHints.first(where: { InterfaceOverrides.matches($0.pattern, link.name) })
    {
      return Classification(
        type: hint.type, isMetered: hint.metered, reason: .nameHint(hint.pattern))
    }
    let type: LinkType = link.hardwareType == HardwareType.ethernet ? .ethernet : .other
    return unmetered(type, .unknown)
  }

  /// Whether the link is a tunnel (by kind, or by a tunnel hardware type).
  static func isTunnel(_ link: LinkInfo) -> Bool {
    if let kind = link.kind { return tunnelKinds.contains(kind) }
    return [HardwareType.tunnel, HardwareType.tunnel6, HardwareType.sit, HardwareType.ipGRE]
      .contains(link.hardwareType)
  }
}
