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
    /// `NL80211_CMD_NEW_SCAN_RESULTS` (34): one BSS of a `GET_SCAN` dump reply.
    case newScanResults
    /// Any other command (regulatory, scan triggers, ...).
    case other(UInt8)

    init(_ raw: UInt8) {
      switch raw {
      case 7: self = .newInterface
      case 8: self = .deleteInterface
      case 34: self = .newScanResults
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
  /// `NL80211_ATTR_IFTYPE` (`NL80211_IFTYPE_*`: 1 ad-hoc, 2 station, 3 access point, ...).
  public var interfaceType: UInt32?
  /// `NL80211_ATTR_SSID`, raw bytes (1–32; not necessarily text).
  public var ssid: [UInt8]?
  /// `NL80211_ATTR_BSS` of a scan-results message.
  public var bss: Nl80211BSS?

  /// Whether the interface is a client of some network (station, P2P client, or ad-hoc) —
  /// the kinds whose network `GET_SCAN` can tell — or of an unknown type.
  public var isClientInterface: Bool {
    guard let interfaceType else { return true }
    return interfaceType == 1 || interfaceType == 2 || interfaceType == 8
  }
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
  static let attributeInterfaceType: UInt16 = 5
  static let attributeBSS: UInt16 = 47
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
        let body = Array(datagram[(offset + headerLength)..<(offset + length)])
        results.append(Result { () throws(Nl80211ParseError) in try parse(body) })
      }
      offset += (length + 3) & ~3
    }
    return results
  }

  /// The sequence numbers of the `NLMSG_DONE` and `NLMSG_ERROR` messages in `datagram`: the
  /// requests whose dump ended (or that failed).
  public static func endedRequests(in datagram: [UInt8]) -> [UInt32] {
    var sequences: [UInt32] = []
    var offset = 0
    while offset + headerLength <= datagram.count {
      let length = Int(readU32(datagram, offset))
      let type = readU16(datagram, offset + 4)
      if type == netlinkDone || type == netlinkError {
        sequences.append(readU32(datagram, offset + 8))
      }
      guard length >= headerLength else { break }
      offset += (length + 3) & ~3
    }
    return sequences
  }

  /// Parses one message body: the generic-netlink header and its attributes.
  static func parse(_ body: [UInt8]) throws(Nl80211ParseError) -> Nl80211Message {
    guard body.count >= genericHeaderLength else {
      throw Nl80211ParseError(description: "generic netlink header truncated")
    }
    var message = Nl80211Message(command: .init(body[0]))
    var requestElements: [UInt8]?
    try forEachAttribute(in: body, from: genericHeaderLength, context: nil) {
      (type, payload) throws(Nl80211ParseError) in
      switch type {
      case attributeInterfaceIndex:
        guard payload.count == 4 else {
          throw Nl80211ParseError(description: "IFINDEX has \(payload.count) bytes")
        }
        message.interfaceIndex = readU32(payload, 0)
      case attributeInterfaceName:
        let name = payload.prefix { $0 != 0 }
        guard !name.isEmpty, name.count < 16, let text = String(validating: name, as: UTF8.self)
        else { throw Nl80211ParseError(description: "IFNAME is not a name") }
        message.interfaceName = text
      case attributeInterfaceType:
        guard payload.count == 4 else {
          throw Nl80211ParseError(description: "IFTYPE has \(payload.count) bytes")
        }
        message.interfaceType = readU32(payload, 0)
      case attributeSSID:
        guard (1...32).contains(payload.count) else {
          throw Nl80211ParseError(description: "SSID has \(payload.count) bytes")
        }
        message.ssid = payload
      case attributeRequestIEs:
        requestElements = payload
      case attributeBSS:
        message.bss = try bss(payload)
      default:
        break
      }
    }
    if message.ssid == nil, let requestElements {
      message.ssid = try ssidElement(in: requestElements, context: "REQ_IE")
    }
    return message
  }

  /// Calls `body` with the type (flag bits cleared) and payload of each netlink attribute in
  /// `bytes` from `start`; a length that is too short or runs past the end is an error naming
  /// the attribute (`context` names the nest, if any).
  static func forEachAttribute(
    in bytes: [UInt8], from start: Int, context: String?,
    _ body: (UInt16, [UInt8]) throws(Nl80211ParseError) -> Void
  ) throws(Nl80211ParseError) {
    var offset = start
    while offset < bytes.count {
      let place = context.map { " in \($0)" } ?? ""
      guard offset + 4 <= bytes.count else {
        throw Nl80211ParseError(
          description: "attribute header truncated at \(offset)\(place)")
      }
      let length = Int(readU16(bytes, offset))
      let type = readU16(bytes, offset + 2) & 0x3FFF
      guard length >= 4, offset + length <= bytes.count else {
        throw Nl80211ParseError(
          description: "attribute \(type) has length \(length) at \(offset)\(place)")
      }
      try body(type, Array(bytes[(offset + 4)..<(offset + length)]))
      offset += (length + 3) & ~3
    }
  }

  /// The SSID element (id 0) among 802.11 information elements: `nil` when there is none or
  /// it is empty (a hidden network's beacon); an error when an element runs past the end or
  /// the SSID is longer than 32 bytes. `context` names the attribute in errors.
  static func ssidElement(in elements: [UInt8], context: String) throws(Nl80211ParseError)
    -> [UInt8]?
  {
    var offset = 0
    while offset < elements.count {
      guard offset + 2 <= elements.count, offset + 2 + Int(elements[offset + 1]) <= elements.count
      else {
        throw Nl80211ParseError(description: "\(context): element truncated at byte \(offset)")
      }
      let id = elements[offset]
      let length = Int(elements[offset + 1])
      if id == 0 {
        guard length <= 32 else {
          throw Nl80211ParseError(description: "\(context): SSID element has \(length) bytes")
        }
        return length == 0 ? nil : Array(elements[(offset + 2)..<(offset + 2 + length)])
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
