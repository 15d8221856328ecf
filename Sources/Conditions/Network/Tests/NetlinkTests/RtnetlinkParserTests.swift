import Netlink
import Testing

@Suite struct RtnetlinkParserTests {
  @Test func decodesEveryMessageOfARealCapture() throws {
    let messages = try FixtureFiles.messages("real-veth-dual-stack-link-down")
    #expect(messages.count > 20)
    var kinds: Set<String> = []
    for message in messages {
      let decoded = try RtnetlinkParser.parse(message)
      switch decoded.payload {
      case .link(let link, _):
        kinds.insert("link")
        #expect(!link.name.isEmpty)
      case .address: kinds.insert("address")
      case .route: kinds.insert("route")
      case .dumpRequest: kinds.insert("dumpRequest")
      case .done: kinds.insert("done")
      default: break
      }
    }
    #expect(kinds == ["link", "address", "route", "dumpRequest", "done"])
  }

  @Test func realCaptureHasVethKindAndNoIPv4DefaultRouteDeletion() throws {
    let decoded = try FixtureFiles.messages("real-veth-dual-stack-link-down").map {
      try RtnetlinkParser.parse($0)
    }
    let veth = decoded.compactMap { message -> LinkInfo? in
      if case .link(let link, .new) = message.payload, link.name == "veth0" { return link }
      return nil
    }
    #expect(veth.first?.kind == "veth")
    #expect(veth.last?.isUp == false)
    let ipv4DefaultDeletions = decoded.filter { message in
      if case .route(let route, .delete) = message.payload {
        return route.family == NetlinkConstant.familyIPv4 && route.isDefault
      }
      return false
    }
    #expect(ipv4DefaultDeletions.isEmpty)
  }

  @Test func decodesWireGuardKindAndRouteFields() throws {
    let decoded = try FixtureFiles.messages("wireguard-over-tethering").map {
      try RtnetlinkParser.parse($0)
    }
    let wireguard = decoded.compactMap { message -> LinkInfo? in
      if case .link(let link, .new) = message.payload, link.name == "wg0" { return link }
      return nil
    }.first
    #expect(wireguard?.kind == "wireguard")
    #expect(wireguard?.hardwareType == HardwareType.none)
    #expect(wireguard?.hasCarrier == true)
    let routes = decoded.compactMap { message -> RouteInfo? in
      if case .route(let route, .new) = message.payload { return route }
      return nil
    }
    #expect(routes.map(\.metric).sorted() == [50, 100])
    #expect(routes.allSatisfy { $0.isDefault && $0.table == 254 && $0.type == 1 })
    #expect(Set(routes.flatMap(\.interfaceIndices)) == [2, 3])
  }

  /// Routes the kernel learnt from router advertisements (`proto ra`) expire: `RTA_CACHEINFO`'s
  /// `rta_expires` (a real capture: advertisements sent into a namespace of our own).
  @Test func decodesTheExpiryOfRoutesFromRouterAdvertisements() throws {
    let path = "\(FixtureFiles.directory)/oracle-ipv6-router-preference.pcapng"
    let routes = try PcapReader.records(atPath: path).flatMap { record in
      NetlinkFraming.frames(in: record.message).compactMap { frame -> RouteInfo? in
        guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
          case .route(let route, .new) = message.payload, route.family == 10
        else { return nil }
        return route
      }
    }
    let learnt = routes.filter { $0.routingProtocol == 9 }
    #expect(learnt.count >= 3)
    #expect(learnt.allSatisfy { $0.expires })
    #expect(routes.contains { $0.routingProtocol != 9 })
    #expect(routes.filter { $0.routingProtocol != 9 }.allSatisfy { !$0.expires })
  }

  @Test func decodesMultipathHopsInOrder() throws {
    let routes = try FixtureFiles.messages("multipath").compactMap { bytes -> RouteInfo? in
      if case .route(let route, _) = try RtnetlinkParser.parse(bytes).payload { return route }
      return nil
    }
    #expect(routes.map(\.interfaceIndices) == [[2, 3]])
  }

  /// Each hop's gateway, in the order of the hops (a real capture of IPv6 siblings appended
  /// to a group: the kernel's siblings are told apart by them).
  @Test func decodesEachHopsGateway() throws {
    let path = "\(FixtureFiles.directory)/oracle-ipv6-appended-sibling.pcapng"
    let groups = try PcapReader.records(atPath: path).flatMap { record in
      NetlinkFraming.frames(in: record.message).compactMap { frame -> RouteInfo? in
        guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
          case .route(let route, _) = message.payload, route.interfaceIndices.count > 1
        else { return nil }
        return route
      }
    }
    #expect(!groups.isEmpty)
    for group in groups {
      #expect(group.hopGateways.count == group.interfaceIndices.count)
      #expect(group.hopGateways.allSatisfy { $0.count == 16 })
      #expect(Set(group.hopGateways).count == group.hopGateways.count)
    }
  }

  @Test func namesEachProblemOfTheGarbledFixture() throws {
    let records = try PcapReader.records(atPath: FixtureFiles.pcap("garbled-messages"))
    var reasons: [String] = []
    for record in records {
      for frame in NetlinkFraming.frames(in: record.message) {
        switch frame {
        case .failure(let error):
          reasons.append(error.reason)
        case .success(let message):
          do {
            _ = try RtnetlinkParser.parse(message)
          } catch {
            reasons.append(error.reason)
          }
        }
      }
    }
    #expect(reasons.count == 3)
    #expect(reasons[0].contains("exceeds"))
    #expect(reasons[1].contains("attribute type 1 has length 200"))
    #expect(reasons[2].contains("RTA_MULTIPATH hop length 0"))
  }

  @Test func rejectsPayloadShorterThanFixedHeader() {
    let bytes =
      NetlinkHeader(length: 20, type: 24, flags: 0, sequence: 0, portID: 0).encoded
      + [2, 0, 0, 0]
    #expect(throws: MalformedMessage.self) { try RtnetlinkParser.parse(bytes[...]) }
  }

  @Test func rejectsLinkWithoutName() throws {
    var body: [UInt8] = [0, 0, 1, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]  // ifinfomsg, no attrs
    body += [8, 0, 4, 0, 0xDC, 0x05, 0, 0]  // IFLA_MTU 1500
    let bytes =
      NetlinkHeader(length: UInt32(16 + body.count), type: 16, flags: 0, sequence: 0, portID: 0)
      .encoded + body
    let error = #expect(throws: MalformedMessage.self) { try RtnetlinkParser.parse(bytes[...]) }
    #expect(error?.reason.hasPrefix("libnl could not parse it") == true)
  }

  /// `NLMSG_DONE` carries the dump's own result: 0, or a negative errno when the kernel gave
  /// the dump up partway (its objects are then not the whole table).
  @Test(arguments: [(Int32(0), RtnetlinkMessage.Payload.done), (-4, .error(code: -4))])
  func doneCarriesTheDumpsResult(code: Int32, payload: RtnetlinkMessage.Payload) throws {
    let body = withUnsafeBytes(of: code.littleEndian) { Array($0) }
    let bytes =
      NetlinkHeader(
        length: UInt32(NetlinkHeader.size + body.count), type: NetlinkConstant.messageDone,
        flags: 2, sequence: 7, portID: 0
      ).encoded + body
    #expect(try RtnetlinkParser.parse(bytes[...]).payload == payload)
  }
}
