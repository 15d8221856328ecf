import CNetlink

/// Decodes raw rtnetlink messages with libnl (`nlmsg_convert` + `nl_msg_parse`) after checking
/// every length field in Swift, so malformed bytes become a ``MalformedMessage`` and never reach
/// libnl's parsers.
public enum RtnetlinkParser {
  /// Decodes one complete message (as cut out by ``NetlinkFraming``).
  public static func parse(_ message: ArraySlice<UInt8>) throws(MalformedMessage)
    -> RtnetlinkMessage
  {
    guard let header = NetlinkHeader(decoding: message) else {
      throw MalformedMessage("truncated header: only \(message.count) bytes")
    }
    guard Int(header.length) == message.count else {
      throw MalformedMessage(
        "nlmsg_len \(header.length) does not match the \(message.count)-byte message",
        messageType: header.type)
    }
    let payload = try decodePayload(message, header: header)
    return RtnetlinkMessage(header: header, payload: payload)
  }

  private static func decodePayload(_ message: ArraySlice<UInt8>, header: NetlinkHeader)
    throws(MalformedMessage) -> RtnetlinkMessage.Payload
  {
    let body = message.dropFirst(NetlinkHeader.size)
    switch header.type {
    case NetlinkConstant.messageNoop:
      return .unrelated
    case NetlinkConstant.messageError:
      guard body.count >= 4 else {
        throw MalformedMessage(
          "NLMSG_ERROR payload is \(body.count) bytes, less than its 4-byte error code",
          messageType: header.type)
      }
      return .error(code: Int32(bitPattern: body.loadUInt32(at: body.startIndex)))
    case NetlinkConstant.messageDone:
      return .done
    case NetlinkConstant.messageOverrun:
      return .overrun
    case UInt16(RTM_GETLINK), UInt16(RTM_GETADDR), UInt16(RTM_GETROUTE):
      guard header.flags & NetlinkConstant.flagDump == NetlinkConstant.flagDump else {
        return .unrelated
      }
      let kinds: [UInt16: ObjectKind] = [
        UInt16(RTM_GETLINK): .link, UInt16(RTM_GETADDR): .address, UInt16(RTM_GETROUTE): .route,
      ]
      return .dumpRequest(kinds[header.type]!)
    case UInt16(RTM_NEWLINK), UInt16(RTM_DELLINK):
      return try decodeObject(message, header: header, kind: .link, fixedSize: 16)
    case UInt16(RTM_NEWADDR), UInt16(RTM_DELADDR):
      return try decodeObject(message, header: header, kind: .address, fixedSize: 8)
    case UInt16(RTM_NEWROUTE), UInt16(RTM_DELROUTE):
      return try decodeObject(message, header: header, kind: .route, fixedSize: 12)
    default:
      return .unrelated
    }
  }

  private static func decodeObject(
    _ message: ArraySlice<UInt8>, header: NetlinkHeader, kind: ObjectKind, fixedSize: Int
  ) throws(MalformedMessage) -> RtnetlinkMessage.Payload {
    let available = message.count - NetlinkHeader.size
    guard available >= fixedSize else {
      throw MalformedMessage(
        "\(kind.rawValue) message payload is \(available) bytes, less than its "
          + "\(fixedSize)-byte fixed header", messageType: header.type)
    }
    let family = message[message.startIndex + NetlinkHeader.size]
    switch kind {
    case .link where family != NetlinkConstant.familyUnspecified:
      return .unrelated  // bridge-port and per-protocol link messages: not the link itself
    case .address, .route:
      guard family == NetlinkConstant.familyIPv4 || family == NetlinkConstant.familyIPv6 else {
        return .unrelated
      }
    default:
      break
    }
    do {
      try AttributeValidator.validate(
        message, from: message.startIndex + NetlinkHeader.size + fixedSize, kind: kind)
    } catch {
      throw MalformedMessage(error.reason, messageType: header.type)
    }
    let action: MessageAction = header.type & 1 == 0 ? .new : .delete
    let object = try LibnlObjectDecoder.decode(message, kind: kind, messageType: header.type)
    switch object {
    case .link(let link): return .link(link, action)
    case .address(let address): return .address(address, action)
    case .route(let route): return .route(route, action)
    }
  }
}
