/// Decodes route, rule and nexthop messages in Swift, straight from their attributes (libnl
/// 3.7 knows neither `RTA_NH_ID` nor nexthop objects). Attribute layouts are checked by
/// ``AttributeValidator`` first.
enum RoutingObjectDecoder {
  /// `struct rtmsg` → ``RouteInfo``. `body` starts at the rtmsg.
  static func route(_ body: ArraySlice<UInt8>) throws(MalformedMessage) -> RouteInfo {
    let base = body.startIndex
    var route = RouteInfo(
      family: body[base], table: UInt32(body[base + 4]), type: body[base + 7],
      routingProtocol: body[base + 5], destinationPrefixLength: body[base + 1], destination: [],
      metric: 0, interfaceIndices: [])
    route.tos = body[base + 3]
    var outputInterface: Int32 = 0
    var hops: [(index: Int32, gateway: [UInt8])] = []
    try AttributeValidator.walk(body, from: base + 12, to: body.endIndex, context: "attribute") {
      (type, payload) throws(MalformedMessage) in
      switch type & 0x3FFF {
      case 1: route.destination = Array(payload)  // RTA_DST
      case 4: outputInterface = Int32(bitPattern: try u32(payload, "RTA_OIF"))
      case 5:  // RTA_GATEWAY
        route.gateway = Array(payload)
        route.hasGateway = true
      case 18:  // RTA_VIA: struct rtvia { family; address }
        route.gateway = Array(payload.dropFirst(2))
        route.hasGateway = true
      case 6: route.metric = try u32(payload, "RTA_PRIORITY")
      case 7: route.preferredSource = Array(payload)  // RTA_PREFSRC
      case 9:  // RTA_MULTIPATH
        hops = try multipathHops(payload)
      case 12:  // RTA_CACHEINFO: struct rta_cacheinfo, its rta_expires at offset 8
        if payload.count >= 12 {
          route.expires = payload.loadUInt32(at: payload.startIndex + 8) != 0
        }
      case 15: route.table = try u32(payload, "RTA_TABLE")
      case 30: route.nexthopID = try u32(payload, "RTA_NH_ID")
      default: break
      }
    }
    if outputInterface > 0 {
      route.interfaceIndices = [outputInterface]
    } else {
      let used = hops.filter { $0.index > 0 }
      route.interfaceIndices = used.map(\.index)
      if hops.count > 1 { route.hopGateways = used.map(\.gateway) }
    }
    if hops.count > 1 { route.hasGateway = true }  // the kernel makes siblings of gateway routes
    return route
  }

  /// `struct fib_rule_hdr` → ``RuleInfo``. `body` starts at the header.
  static func rule(_ body: ArraySlice<UInt8>) throws(MalformedMessage) -> RuleInfo {
    let base = body.startIndex
    let flags = body.loadUInt32(at: base + 8)
    var rule = RuleInfo(
      family: body[base], priority: 0, action: body[base + 7], table: UInt32(body[base + 4]),
      isInverted: flags & 0x2 != 0, destinationPrefixLength: body[base + 1],
      sourcePrefixLength: body[base + 2], hasUnmatchableSelector: body[base + 3] != 0)
    var mask: UInt32?
    try AttributeValidator.walk(body, from: base + 12, to: body.endIndex, context: "attribute") {
      (type, payload) throws(MalformedMessage) in
      switch type & 0x3FFF {
      case 1: rule.destination = Array(payload)  // FRA_DST
      case 3: rule.inputInterface = string(payload)  // FRA_IIFNAME
      case 4: rule.gotoPriority = try u32(payload, "FRA_GOTO")
      case 6: rule.priority = try u32(payload, "FRA_PRIORITY")
      case 10: rule.firewallMark = try u32(payload, "FRA_FWMARK")
      case 14:
        let value = Int32(bitPattern: try u32(payload, "FRA_SUPPRESS_PREFIXLEN"))
        rule.suppressPrefixLength = value >= 0 ? value : nil
      case 15: rule.table = try u32(payload, "FRA_TABLE")
      case 16: mask = try u32(payload, "FRA_FWMASK")
      case 17: rule.outputInterface = string(payload)  // FRA_OIFNAME
      // FRA_TUN_ID, FRA_L3MDEV, FRA_UID_RANGE, FRA_IP_PROTO, FRA_SPORT/DPORT_RANGE, FRA_DSCP
      case 12, 19, 20, 22, 23, 24, 25: rule.hasUnmatchableSelector = true
      default: break
      }
    }
    rule.firewallMask = mask ?? (rule.firewallMark != 0 ? UInt32.max : 0)
    return rule
  }

  /// `struct nhmsg` → ``NexthopInfo``. `body` starts at the nhmsg.
  static func nexthop(_ body: ArraySlice<UInt8>) throws(MalformedMessage) -> NexthopInfo {
    let base = body.startIndex
    var id: UInt32?
    var nexthop = NexthopInfo(id: 0, family: body[base], interfaceIndex: 0)
    try AttributeValidator.walk(body, from: base + 8, to: body.endIndex, context: "attribute") {
      (type, payload) throws(MalformedMessage) in
      switch type & 0x3FFF {
      case 1: id = try u32(payload, "NHA_ID")
      case 2:  // NHA_GROUP: struct nexthop_grp { u32 id; u8 weight; u8 high; u16 resvd }
        guard payload.count % 8 == 0 else {
          throw MalformedMessage("NHA_GROUP is \(payload.count) bytes, not a multiple of 8")
        }
        nexthop.group = stride(from: payload.startIndex, to: payload.endIndex, by: 8).map {
          payload.loadUInt32(at: $0)
        }
      case 4: nexthop.isBlackhole = true
      case 5: nexthop.interfaceIndex = Int32(bitPattern: try u32(payload, "NHA_OIF"))
      default: break
      }
    }
    guard let id else { throw MalformedMessage("nexthop message without NHA_ID") }
    nexthop.id = id
    return nexthop
  }

  private static func u32(_ payload: ArraySlice<UInt8>, _ name: String) throws(MalformedMessage)
    -> UInt32
  {
    guard payload.count >= 4 else {
      throw MalformedMessage("\(name) is \(payload.count) bytes, expected 4")
    }
    return payload.loadUInt32(at: payload.startIndex)
  }

  private static func string(_ payload: ArraySlice<UInt8>) -> String {
    String(decoding: payload.prefix { $0 != 0 }, as: UTF8.self)
  }

  /// The hops of `RTA_MULTIPATH`, checked as they are read: each `struct rtnexthop`'s
  /// interface and gateway (`RTA_GATEWAY`, or `RTA_VIA`'s address), in order.
  private static func multipathHops(
    _ payload: ArraySlice<UInt8>
  ) throws(MalformedMessage) -> [(index: Int32, gateway: [UInt8])] {
    var hops: [(index: Int32, gateway: [UInt8])] = []
    var gateway: [UInt8] = []
    try AttributeValidator.walkMultipath(
      payload,
      attribute: { (type, value) throws(MalformedMessage) in
        switch type & 0x3FFF {
        case 5: gateway = Array(value)  // RTA_GATEWAY
        case 18: gateway = Array(value.dropFirst(2))  // RTA_VIA: struct rtvia { family; address }
        default: break
        }
      },
      hop: { header in
        hops.append((Int32(bitPattern: payload.loadUInt32(at: header + 4)), gateway))
        gateway = []
      })
    return hops
  }
}
