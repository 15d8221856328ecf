import CNetlink

/// Decodes raw rtnetlink messages after checking every length field in Swift, so malformed
/// bytes become a ``MalformedMessage``: links and addresses through libnl (`nlmsg_convert` +
/// `nl_msg_parse`), routes, rules and nexthops directly. Routes to specific prefixes are
/// recognised from their fixed header alone (``RtnetlinkMessage/Payload/nonDefaultRoute``).
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
      // Since Linux 4.x the payload is the dump's own result: a negative errno when the dump
      // was given up partway, so the objects before it are not the whole table.
      if body.count >= 4 {
        let code = Int32(bitPattern: body.loadUInt32(at: body.startIndex))
        if code < 0 { return .error(code: code) }
      }
      return .done
    case NetlinkConstant.messageOverrun:
      return .overrun
    case UInt16(RTM_GETLINK), UInt16(RTM_GETADDR), UInt16(RTM_GETROUTE), UInt16(RTM_GETRULE),
      UInt16(RTM_GETNEXTHOP):
      guard header.flags & NetlinkConstant.flagDump == NetlinkConstant.flagDump else {
        return .unrelated
      }
      let kinds: [UInt16: ObjectKind] = [
        UInt16(RTM_GETLINK): .link, UInt16(RTM_GETADDR): .address, UInt16(RTM_GETROUTE): .route,
        UInt16(RTM_GETRULE): .rule, UInt16(RTM_GETNEXTHOP): .nexthop,
      ]
      return .dumpRequest(kinds[header.type]!)
    case UInt16(RTM_NEWLINK), UInt16(RTM_DELLINK):
      return try decodeObject(message, header: header, kind: .link, fixedSize: 16)
    case UInt16(RTM_NEWADDR), UInt16(RTM_DELADDR):
      return try decodeObject(message, header: header, kind: .address, fixedSize: 8)
    case UInt16(RTM_NEWROUTE), UInt16(RTM_DELROUTE):
      return try decodeObject(message, header: header, kind: .route, fixedSize: 12)
    case UInt16(RTM_NEWRULE), UInt16(RTM_DELRULE):
      return try decodeObject(message, header: header, kind: .rule, fixedSize: 12)
    case UInt16(RTM_NEWNEXTHOP), UInt16(RTM_DELNEXTHOP):
      return try decodeObject(message, header: header, kind: .nexthop, fixedSize: 8)
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
    let bodyStart = message.startIndex + NetlinkHeader.size
    let family = message[bodyStart]
    switch kind {
    case .link where family != NetlinkConstant.familyUnspecified:
      return .unrelated  // bridge-port and per-protocol link messages: not the link itself
    case .address, .route, .rule:
      guard family == NetlinkConstant.familyIPv4 || family == NetlinkConstant.familyIPv6 else {
        return .unrelated
      }
    default:
      break
    }
    // Cheap path for big FIBs: a route to a specific prefix is not decoded further, unless it
    // answers one of our own lookups.
    if kind == .route, message[bodyStart + 1] != 0, !RouteLookupRequest.isLookup(header) {
      return .nonDefaultRoute
    }
    let action: MessageAction = header.type & 1 == 0 ? .new : .delete
    let body = message[bodyStart...]
    do {
      // Routes, rules and nexthops are decoded here, checking each attribute as it is read;
      // links and addresses go to libnl, which must only see attributes checked before.
      switch kind {
      case .route: return .route(try RoutingObjectDecoder.route(body), action)
      case .rule: return .rule(try RoutingObjectDecoder.rule(body), action)
      case .nexthop: return .nexthop(try RoutingObjectDecoder.nexthop(body), action)
      case .link, .address:
        try AttributeValidator.validate(
          message, from: message.startIndex + NetlinkHeader.size + fixedSize, kind: kind)
      }
    } catch {
      throw MalformedMessage(error.reason, messageType: header.type)
    }
    switch try LibnlObjectDecoder.decode(message, kind: kind, messageType: header.type) {
    case .link(let link): return .link(link, action)
    case .address(let address): return .address(address, action)
    }
  }
}
