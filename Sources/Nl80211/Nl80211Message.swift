/// One nl80211 generic-netlink message, reduced to what Wi-Fi identity needs.
public struct Nl80211Message: Sendable, Equatable {
  /// The nl80211 commands this package understands (numbers from `<linux/nl80211.h>`).
  public enum Command: Sendable, Equatable {
    /// `NL80211_CMD_NEW_INTERFACE` (7): a `GET_INTERFACE` reply or an interface event.
    case newInterface
    /// `NL80211_CMD_DEL_INTERFACE` (8): the interface is gone.
    case deleteInterface
    /// `NL80211_CMD_CONNECT` (46): association finished (status in `STATUS_CODE`).
    case connect
    /// `NL80211_CMD_ROAM` (47): moved to another access point, maybe another network.
    case roam
    /// `NL80211_CMD_DISCONNECT` (48): no longer associated.
    case disconnect
    /// Any other command (scan results, regulatory, ...).
    case other(UInt8)

    init(_ raw: UInt8) {
      switch raw {
      case 7: self = .newInterface
      case 8: self = .deleteInterface
      case 46: self = .connect
      case 47: self = .roam
      case 48: self = .disconnect
      default: self = .other(raw)
      }
    }
  }

  /// What the message is about.
  public var command: Command
  /// `NL80211_ATTR_IFINDEX`.
  public var interfaceIndex: UInt32?
  /// `NL80211_ATTR_IFNAME`.
  public var interfaceName: String?
  /// `NL80211_ATTR_SSID`, raw bytes (1–32; not necessarily text).
  public var ssid: [UInt8]?
}

/// A malformed nl80211 message: what was wrong and where.
public struct Nl80211ParseError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What was wrong.
  public var description: String
}

/// Parses nl80211 messages from raw netlink datagram bytes (host byte order).
public enum Nl80211Parser {
  static let attributeInterfaceIndex: UInt16 = 3
  static let attributeInterfaceName: UInt16 = 4
  static let attributeSSID: UInt16 = 52
  /// `NL80211_ATTR_REQ_IE`: the association request's information elements. mac80211's
  /// `CONNECT` and `ROAM` events carry the SSID only here (element 0).
  static let attributeRequestIEs: UInt16 = 77
  static let netlinkDone: UInt16 = 3
  static let netlinkError: UInt16 = 2
  static let headerLength = 16
  static let genericHeaderLength = 4

  /// Every nl80211 message (type == `family`) in `datagram`; other messages (errors, done,
  /// control) are skipped. A bad message is reported as a failure and parsing goes on with the
  /// next one when its length is sane.
  public static func messages(in datagram: [UInt8], family: UInt16)
    -> [Result<Nl80211Message, Nl80211ParseError>]
  {
    var results: [Result<Nl80211Message, Nl80211ParseError>] = []
    var offset = 0
    while offset + headerLength <= datagram.count {
      let length = Int(readU32(datagram, offset))
      let type = readU16(datagram, offset + 4)
      guard length >= headerLength, offset + length <= datagram.count else {
        results.append(
          .failure(Nl80211ParseError(description: "netlink length \(length) at byte \(offset)")))
        return results
      }
      if type == family {
        results.append(parse(Array(datagram[(offset + headerLength)..<(offset + length)])))
      }
      offset += (length + 3) & ~3
    }
    return results
  }

  /// Whether `datagram` holds an `NLMSG_DONE` or `NLMSG_ERROR` (the end of a dump or the
  /// answer to a failed request).
  public static func containsDone(_ datagram: [UInt8]) -> Bool {
    var offset = 0
    while offset + headerLength <= datagram.count {
      let length = Int(readU32(datagram, offset))
      let type = readU16(datagram, offset + 4)
      if type == netlinkDone || type == netlinkError { return true }
      guard length >= headerLength else { return false }
      offset += (length + 3) & ~3
    }
    return false
  }

  /// Parses one message body: the generic-netlink header and its attributes.
  static func parse(_ body: [UInt8]) -> Result<Nl80211Message, Nl80211ParseError> {
    guard body.count >= genericHeaderLength else {
      return .failure(Nl80211ParseError(description: "generic netlink header truncated"))
    }
    var message = Nl80211Message(command: .init(body[0]))
    var offset = genericHeaderLength
    while offset + 4 <= body.count {
      let length = Int(readU16(body, offset))
      let type = readU16(body, offset + 2) & 0x3FFF
      guard length >= 4, offset + length <= body.count else {
        return .failure(
          Nl80211ParseError(description: "attribute \(type) has length \(length) at \(offset)"))
      }
      let payload = Array(body[(offset + 4)..<(offset + length)])
      switch type {
      case attributeInterfaceIndex:
        guard payload.count == 4 else {
          return .failure(Nl80211ParseError(description: "IFINDEX has \(payload.count) bytes"))
        }
        message.interfaceIndex = readU32(payload, 0)
      case attributeInterfaceName:
        let name = payload.prefix { $0 != 0 }
        guard !name.isEmpty, name.count < 16, let text = String(validating: name, as: UTF8.self)
        else { return .failure(Nl80211ParseError(description: "IFNAME is not a name")) }
        message.interfaceName = text
      case attributeSSID:
        guard (1...32).contains(payload.count) else {
          return .failure(Nl80211ParseError(description: "SSID has \(payload.count) bytes"))
        }
        message.ssid = payload
      case attributeRequestIEs:
        if message.ssid == nil { message.ssid = ssidElement(in: payload) }
      default:
        break
      }
      offset += (length + 3) & ~3
    }
    return .success(message)
  }

  /// The SSID element (id 0, 1–32 bytes) among 802.11 information elements, if any.
  static func ssidElement(in elements: [UInt8]) -> [UInt8]? {
    var offset = 0
    while offset + 2 <= elements.count {
      let id = elements[offset]
      let length = Int(elements[offset + 1])
      guard offset + 2 + length <= elements.count else { return nil }
      if id == 0 {
        return (1...32).contains(length)
          ? Array(elements[(offset + 2)..<(offset + 2 + length)]) : nil
      }
      offset += 2 + length
    }
    return nil
  }

  static func readU16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
  }

  static func readU32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
  }
}
