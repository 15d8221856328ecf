import CNetlink

/// The libnl half of parsing: hands a validated message to `nl_msg_parse` and reads the
/// resulting `rtnl_link` / `rtnl_addr` object into Swift values.
enum LibnlObjectDecoder {
  enum Object {
    case link(LinkInfo)
    case address(AddressInfo)
  }

  private struct Context {
    var kind: ObjectKind
    var object: Object?
    var problem: String?
  }

  static func decode(_ message: ArraySlice<UInt8>, kind: ObjectKind, messageType: UInt16)
    throws(MalformedMessage) -> Object
  {
    var context = Context(kind: kind)
    let status: Int32 = Array(message).withUnsafeBytes { raw in
      let header = UnsafeMutableRawPointer(mutating: raw.baseAddress!)
        .assumingMemoryBound(to: nlmsghdr.self)
      guard let converted = nlmsg_convert(header) else { return -Int32(NLE_NOMEM) }
      defer { nlmsg_free(converted) }
      nlmsg_set_proto(converted, NETLINK_ROUTE)
      return withUnsafeMutablePointer(to: &context) { pointer in
        nl_msg_parse(
          converted,
          { object, argument in
            let context = argument!.assumingMemoryBound(to: Context.self)
            guard let object else { return }
            LibnlObjectDecoder.extract(object, into: &context.pointee)
          }, pointer)
      }
    }
    if status < 0 {
      let text = String(cString: nl_geterror(status))
      throw MalformedMessage("libnl could not parse it: \(text)", messageType: messageType)
    }
    if let problem = context.problem {
      throw MalformedMessage(problem, messageType: messageType)
    }
    guard let object = context.object else {
      throw MalformedMessage("libnl produced no \(kind.rawValue) object", messageType: messageType)
    }
    return object
  }

  private static func extract(_ object: OpaquePointer, into context: inout Context) {
    switch context.kind {
    case .link:
      guard let name = rtnl_link_get_name(object).map({ String(cString: $0) }), !name.isEmpty
      else {
        context.problem = "link message without IFLA_IFNAME"
        return
      }
      context.object = .link(
        LinkInfo(
          family: UInt8(truncatingIfNeeded: rtnl_link_get_family(object)),
          index: rtnl_link_get_ifindex(object),
          name: name,
          flags: rtnl_link_get_flags(object),
          hardwareType: UInt16(truncatingIfNeeded: rtnl_link_get_arptype(object)),
          kind: rtnl_link_get_type(object).map { String(cString: $0) }))
    case .address:
      context.object = .address(
        AddressInfo(
          family: UInt8(truncatingIfNeeded: rtnl_addr_get_family(object)),
          interfaceIndex: rtnl_addr_get_ifindex(object),
          prefixLength: UInt8(truncatingIfNeeded: rtnl_addr_get_prefixlen(object)),
          scope: UInt8(truncatingIfNeeded: rtnl_addr_get_scope(object)),
          flags: rtnl_addr_get_flags(object),
          address: bytes(of: rtnl_addr_get_local(object))))
    case .route, .rule, .nexthop:
      context.problem = "\(context.kind.rawValue) messages are not decoded by libnl"
    }
  }

  private static func bytes(of address: OpaquePointer?) -> [UInt8] {
    guard let address, let data = nl_addr_get_binary_addr(address) else { return [] }
    let length = Int(nl_addr_get_len(address))
    return Array(UnsafeRawBufferPointer(start: data, count: length))
  }
}
