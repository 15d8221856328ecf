/// One access point (or IBSS) of a `GET_SCAN` reply (`NL80211_ATTR_BSS`), reduced to what
/// Wi-Fi identity needs: whether this interface uses it, and then its SSID. This is what
/// `iw dev wlan0 link` reads when the interface reply leaves the SSID out.
public struct Nl80211BSS: Sendable, Equatable {
  /// `NL80211_BSS_STATUS`: how the interface uses this BSS.
  public enum Status: Sendable, Equatable {
    /// `NL80211_BSS_STATUS_AUTHENTICATED` (0): authenticated, not (yet) associated.
    case authenticated
    /// `NL80211_BSS_STATUS_ASSOCIATED` (1): the station's current access point.
    case associated
    /// `NL80211_BSS_STATUS_IBSS_JOINED` (2): the ad-hoc network the interface joined.
    case ibssJoined
    /// A value newer than this package.
    case other(UInt32)

    init(_ raw: UInt32) {
      switch raw {
      case 0: self = .authenticated
      case 1: self = .associated
      case 2: self = .ibssJoined
      default: self = .other(raw)
      }
    }
  }

  /// How the interface uses this BSS; `nil` for a BSS it merely saw in a scan.
  public var status: Status?
  /// The SSID (1–32 raw bytes), decoded only for a BSS in use: from the probe-response (or
  /// beacon) elements, else from the beacon's own elements (a hidden network's beacon has an
  /// empty SSID element).
  public var ssid: [UInt8]?

  /// Whether the interface is associated with (or has joined) this BSS.
  public var isInUse: Bool { status == .associated || status == .ibssJoined }
}

extension Nl80211Parser {
  static let bssAttributeElements: UInt16 = 6
  static let bssAttributeStatus: UInt16 = 9
  static let bssAttributeBeaconElements: UInt16 = 11

  /// Parses the payload of `NL80211_ATTR_BSS` (nested attributes).
  static func bss(_ payload: [UInt8]) throws(Nl80211ParseError) -> Nl80211BSS {
    var result = Nl80211BSS()
    var elements: [UInt8]?
    var beaconElements: [UInt8]?
    try forEachAttribute(in: payload, from: 0, context: "BSS") {
      (type, value) throws(Nl80211ParseError) in
      switch type {
      case bssAttributeStatus:
        guard value.count == 4 else {
          throw Nl80211ParseError(description: "BSS status has \(value.count) bytes")
        }
        result.status = Nl80211BSS.Status(readU32(value, 0))
      case bssAttributeElements: elements = value
      case bssAttributeBeaconElements: beaconElements = value
      default: break
      }
    }
    guard result.isInUse else { return result }
    if let elements {
      result.ssid = try ssidElement(in: elements, context: "BSS information elements")
    }
    if result.ssid == nil, let beaconElements {
      result.ssid = try ssidElement(in: beaconElements, context: "BSS beacon elements")
    }
    return result
  }
}
