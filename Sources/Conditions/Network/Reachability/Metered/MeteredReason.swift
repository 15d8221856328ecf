/// The signal that decided whether a link is metered, most specific first.
public enum MeteredReason: Sendable, Equatable, Hashable, CustomStringConvertible {
  /// A user override glob matched the interface name.
  case userOverride(pattern: String)
  /// A `metered-ssids` / `unmetered-ssids` glob matched the Wi-Fi link's SSID.
  case ssidOverride(pattern: String, ssid: String)
  /// NetworkManager's `Metered` property of the link's device: an explicit `yes`/`no` (set on
  /// the connection) wins over kernel signals, a `guess-yes`/`guess-no` only over defaults.
  case networkManager(NetworkManagerMetered)
  /// ModemManager: the link is the bearer of a modem registered on a roaming network; roaming
  /// is metered whatever else says.
  case modemManagerRoaming
  /// `DEVTYPE=wwan` in sysfs uevent: a cellular modem.
  case wwanDevtype
  /// `ARPHRD_RAWIP`: a cellular data path.
  case rawIP
  /// `ARPHRD_PPP`: dial-up or cellular PPP.
  case ppp
  /// `ARPHRD_NONE` without a link kind: a modem in raw-IP mode (qmi_wwan).
  case noneWithoutKind
  /// `DEVTYPE=bluetooth`: Bluetooth PAN to a phone.
  case bluetooth
  /// A USB tethering driver (`rndis_host`, `cdc_ncm`, `ipheth`).
  case tetheringDriver(String)
  /// A Wi-Fi link (`DEVTYPE=wlan` or a `wireless` directory); assumed unmetered.
  case wifi
  /// A wired Ethernet NIC; unmetered.
  case ethernet
  /// A tunnel takes the metered state of the best non-tunnel uplink (`nil`: none usable).
  case tunnelInherits(from: String?)
  /// A virtual link kind (veth, bridge, ...); not an uplink, unmetered.
  case virtual(kind: String)
  /// Nothing else decided; the interface name matched this weak hint.
  case nameHint(String)
  /// Loopback: never metered.
  case loopback
  /// No signal at all: unmetered.
  case unknown

  /// Short machine-readable form used in JSON, e.g. `tethering-driver:rndis_host`.
  public var code: String {
    switch self {
    case .userOverride(let pattern): "override:\(pattern)"
    case .ssidOverride(let pattern, _): "ssid-override:\(pattern)"
    case .networkManager(let value): "networkmanager:\(value.rawValue)"
    case .modemManagerRoaming: "modemmanager:roaming"
    case .wwanDevtype: "wwan-devtype"
    case .rawIP: "raw-ip"
    case .ppp: "ppp"
    case .noneWithoutKind: "none-without-kind"
    case .bluetooth: "bluetooth"
    case .tetheringDriver(let driver): "tethering-driver:\(driver)"
    case .wifi: "wifi"
    case .ethernet: "ethernet"
    case .tunnelInherits(let uplink): "tunnel-inherits:\(uplink ?? "none")"
    case .virtual(let kind): "virtual:\(kind)"
    case .nameHint(let pattern): "name-hint:\(pattern)"
    case .loopback: "loopback"
    case .unknown: "unknown"
    }
  }

  /// A phrase for humans, e.g. "USB tethering driver rndis_host".
  public var description: String {
    switch self {
    case .userOverride(let pattern): "user override \"\(pattern)\""
    case .ssidOverride(let pattern, let ssid): "SSID \"\(ssid)\" matches \"\(pattern)\""
    case .networkManager(.yes): "NetworkManager: metered (set on the connection)"
    case .networkManager(.no): "NetworkManager: not metered (set on the connection)"
    case .networkManager(.guessYes): "NetworkManager guessed metered (hotspot hint)"
    case .networkManager(.guessNo): "NetworkManager guessed not metered"
    case .networkManager(.unknown): "NetworkManager has no opinion"
    case .modemManagerRoaming: "roaming (ModemManager: the modem is on a roaming network)"
    case .wwanDevtype: "cellular modem (DEVTYPE=wwan)"
    case .rawIP: "cellular raw-IP link (ARPHRD_RAWIP)"
    case .ppp: "PPP link (ARPHRD_PPP)"
    case .noneWithoutKind: "modem in raw-IP mode (ARPHRD_NONE without link kind)"
    case .bluetooth: "Bluetooth tethering (DEVTYPE=bluetooth)"
    case .tetheringDriver(let driver): "USB tethering driver \(driver)"
    case .wifi: "Wi-Fi, assumed unmetered"
    case .ethernet: "wired Ethernet"
    case .tunnelInherits(let uplink?): "tunnel over \(uplink)"
    case .tunnelInherits(nil): "tunnel without a usable uplink"
    case .virtual(let kind): "virtual link (\(kind))"
    case .nameHint(let pattern): "interface name matches \"\(pattern)\" (weak hint)"
    case .loopback: "loopback"
    case .unknown: "no metered signal"
    }
  }
}
