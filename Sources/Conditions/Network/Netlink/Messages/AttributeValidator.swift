/// Checks the attribute (TLV) layout of rtnetlink messages: of links and addresses before libnl
/// sees them (libnl trusts some lengths), of routes, rules and nexthops as our decoders walk
/// them.
enum AttributeValidator {
  /// Attribute types whose payload is itself a list of attributes, per message family.
  private static let linkNested: Set<UInt16> = [18, 26]  // IFLA_LINKINFO, IFLA_AF_SPEC
  private static let linkInfoNested: Set<UInt16> = [2, 5]  // IFLA_INFO_DATA, IFLA_INFO_SLAVE_DATA

  /// Validates the attributes of a message of `kind` starting at `start` within `message`.
  static func validate(_ message: ArraySlice<UInt8>, from start: Int, kind: ObjectKind)
    throws(MalformedMessage)
  {
    try walk(message, from: start, to: message.endIndex, context: "attribute") {
      (type, payload) throws(MalformedMessage) in
      switch kind {
      case .link where linkNested.contains(type & 0x3FFF):
        try walk(
          payload, from: payload.startIndex, to: payload.endIndex, context: "nested link attribute"
        ) {
          (innerType, inner) throws(MalformedMessage) in
          if type & 0x3FFF == 18 && linkInfoNested.contains(innerType & 0x3FFF) {
            try walk(inner, from: inner.startIndex, to: inner.endIndex, context: "link info data") {
              _, _ in
            }
          }
          if type & 0x3FFF == 26 {
            try walk(
              inner, from: inner.startIndex, to: inner.endIndex, context: "address family data"
            ) { _, _ in }
          }
        }
      default:
        break
      }
    }
  }

  /// Walks the `struct rtnexthop` records (8-byte header, then attributes) of an
  /// `RTA_MULTIPATH` payload, once: `attribute` gets each of a record's attributes, then `hop`
  /// the offset of the record's header in `payload`.
  static func walkMultipath(
    _ payload: ArraySlice<UInt8>,
    attribute: (UInt16, ArraySlice<UInt8>) throws(MalformedMessage) -> Void = { _, _ in },
    hop: (_ header: Int) -> Void = { _ in }
  ) throws(MalformedMessage) {
    var offset = payload.startIndex
    while offset < payload.endIndex {
      let remaining = payload.endIndex - offset
      guard remaining >= 8 else {
        throw MalformedMessage("RTA_MULTIPATH has \(remaining) trailing bytes, less than a hop")
      }
      let hopLength = Int(payload.loadUInt16(at: offset))
      guard hopLength >= 8, hopLength <= remaining else {
        throw MalformedMessage("RTA_MULTIPATH hop length \(hopLength) outside 8...\(remaining)")
      }
      try walk(
        payload, from: offset + 8, to: offset + hopLength, context: "multipath hop attribute",
        attribute)
      hop(offset)
      offset += NetlinkFraming.alignedLength(hopLength)
    }
  }

  /// Walks `struct rtattr` / `struct nlattr` records in `bytes[start..<end]`.
  static func walk(
    _ bytes: ArraySlice<UInt8>, from start: Int, to end: Int, context: String,
    _ body: (UInt16, ArraySlice<UInt8>) throws(MalformedMessage) -> Void
  ) throws(MalformedMessage) {
    var offset = start
    while offset < end {
      let remaining = end - offset
      guard remaining >= 4 else {
        throw MalformedMessage("\(remaining) trailing bytes after the last \(context)")
      }
      let length = Int(bytes.loadUInt16(at: offset))
      let type = bytes.loadUInt16(at: offset + 2)
      guard length >= 4, length <= remaining else {
        throw MalformedMessage(
          "\(context) type \(type & 0x3FFF) has length \(length), outside 4...\(remaining)")
      }
      try body(type, bytes[offset + 4..<offset + length])
      offset += NetlinkFraming.alignedLength(length)
    }
  }
}
