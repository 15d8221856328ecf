import Netlink
import Testing

@testable import Reachability

/// Live-mode lookups (`RTM_GETROUTE`) through the engine, on the wired fixture (primary `eth0`):
/// one set of lookups in flight at a time, and a status is published only from answers asked
/// after the last change read.
@Suite struct EgressLookupBatchTests {
  private static let routeNew: UInt16 = 24

  /// The kernel answers a lookup without the routing lock: a route changed on another CPU
  /// after the answer was computed can have its notification queued before the reply. So a
  /// change read before the reply is asked about again, and the first reply publishes nothing.
  @Test func aChangeReadBeforeTheReplyIsAskedAboutAgain() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    let request = engine.nextRequest()
    let first = try #require(request)
    let early = engine.takePublishableStatus()
    #expect(early == nil)  // not before the kernel answered

    // A second default route (metric 5) on the primary link, read before the reply.
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: Int32(primary.index), metric: 5))
    let answeredEarly = engine.takeAnsweredLookups()
    let whileInFlight = engine.nextRequest()
    #expect(!answeredEarly)
    #expect(whileInFlight == nil)  // one set of lookups in flight at a time

    _ = engine.ingest(datagram: replies(to: first, interfaceIndex: Int32(primary.index)))
    let answered = engine.takeAnsweredLookups()
    let again = engine.nextRequest()
    let stale = engine.takePublishableStatus()
    #expect(answered)
    let second = try #require(again, "the change read before the reply is asked about again")
    #expect(stale == nil)  // the first answer may predate the new route

    _ = engine.ingest(datagram: replies(to: second, interfaceIndex: Int32(primary.index)))
    let answeredAgain = engine.takeAnsweredLookups()
    let third = engine.nextRequest()
    let published = engine.takePublishableStatus()
    #expect(answeredAgain)
    #expect(third == nil)
    #expect(published?.primary == primary.name)
  }

  @Test func aChangeReadAfterTheReplyIsAskedAbout() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    let request = engine.nextRequest()
    let first = try #require(request)
    _ = engine.ingest(datagram: replies(to: first, interfaceIndex: Int32(primary.index)))
    let answered = engine.takeAnsweredLookups()
    #expect(answered)
    _ = engine.takePublishableStatus()

    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: Int32(primary.index), metric: 5))
    let second = engine.nextRequest()
    let published = engine.takePublishableStatus()
    #expect(!replies(to: second ?? [], interfaceIndex: 1).isEmpty)
    #expect(published == nil)  // waits for the new answer
  }

  /// A route change another program asked for is multicast with that program's port id and
  /// sequence number; a sequence number equal to one of our lookups in flight does not make it
  /// the kernel's answer (it would set the egress from the other program's route and leave the
  /// change unread by the model).
  @Test func aNotificationWithTheSequenceOfALookupInFlightIsNotItsReply() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    engine.localPort = 4242
    let primary = try #require(engine.model.status().primaryLink)
    let request = engine.nextRequest()
    let first = try #require(request)
    let sequence = try #require(
      NetlinkFraming.frames(in: first).compactMap { try? $0.get() }.first.map {
        try RtnetlinkParser.parse($0).header.sequence
      })

    _ = engine.ingest(
      datagram: defaultRoute(
        interfaceIndex: Int32(primary.index), metric: 5, sequence: sequence, portID: 777))
    let answeredByTheNotification = engine.takeAnsweredLookups()
    #expect(!answeredByTheNotification)

    _ = engine.ingest(
      datagram: replies(to: first, interfaceIndex: Int32(primary.index), portID: 4242))
    let answered = engine.takeAnsweredLookups()
    let again = engine.nextRequest()
    #expect(answered)
    #expect(again != nil, "the other program's change, read by the model, is asked about")
  }

  /// The kernel can notify a change before a lookup sees it (IPv4 sends `RTM_DELROUTE` before
  /// it unlinks the route; the lookup takes no lock): an answer through the link of a route just
  /// deleted is asked for again, up to ``ReachabilityEngine/confirmationLimit`` times. The
  /// benchmark's 400 add/delete pairs kept a deleted route's link primary about once in 1,200
  /// changes before this.
  @Test func anAnswerThroughADeletedRoutesLinkIsAskedForAgain() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    let other = try #require(engine.model.status().links.first { $0.index != primary.index })
    func settle(answering index: Int) -> Int {
      var asked = 0
      while let request = engine.nextRequest() {
        asked += 1
        _ = engine.ingest(datagram: replies(to: request, interfaceIndex: Int32(index)))
      }
      return asked
    }
    #expect(settle(answering: primary.index) == 1)
    // A second default route through the primary link, then deleted: the first answer still
    // names the deleted route's link (stale), the confirmation does not.
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: Int32(other.index), metric: 5))
    #expect(settle(answering: other.index) == 1, "an added route: its answer stands")
    _ = engine.ingest(
      datagram: defaultRoute(interfaceIndex: Int32(other.index), metric: 5, deleted: true))
    let firstRequest = engine.nextRequest()
    let first = try #require(firstRequest)
    _ = engine.ingest(datagram: replies(to: first, interfaceIndex: Int32(other.index)))
    let confirmation = engine.nextRequest()
    let second = try #require(confirmation, "an answer through the deleted route's link")
    _ = engine.ingest(datagram: replies(to: second, interfaceIndex: Int32(primary.index)))
    let settled = engine.nextRequest()
    #expect(settled == nil)
    #expect(engine.status.primary == primary.name)

    // A kernel that keeps answering through that link (another route on it) is not asked
    // without end: its answer stands after the limit.
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: Int32(other.index), metric: 5))
    _ = settle(answering: other.index)
    _ = engine.ingest(
      datagram: defaultRoute(interfaceIndex: Int32(other.index), metric: 5, deleted: true))
    #expect(
      settle(answering: other.index) == 1 + ReachabilityEngine.confirmationLimit,
      "asked again at most twice")
  }

  /// `remove_nexthop` sends `RTM_DELNEXTHOP` before it removes the routes using the nexthop
  /// object, and those go without a notification: an answer through the deleted object's link
  /// (a member's, for a group) is asked for again, as for a deleted route. So is one through the
  /// link of a deleted route that used a nexthop object (the route names no link itself).
  @Test func anAnswerThroughADeletedNexthopsLinkIsAskedForAgain() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    let other = try #require(engine.model.status().links.first { $0.index != primary.index })
    func settle(answering index: Int) -> Int {
      var asked = 0
      while let request = engine.nextRequest() {
        asked += 1
        _ = engine.ingest(datagram: replies(to: request, interfaceIndex: Int32(index)))
      }
      return asked
    }
    /// After `deletion`, the first answer still names `other` (stale), the second does not.
    func deletionIsConfirmed(_ deletion: [UInt8]) throws {
      _ = engine.ingest(datagram: deletion)
      let firstRequest = engine.nextRequest()
      let first = try #require(firstRequest)
      _ = engine.ingest(datagram: replies(to: first, interfaceIndex: Int32(other.index)))
      let confirmation = engine.nextRequest()
      let second = try #require(confirmation, "an answer through the deleted object's link")
      _ = engine.ingest(datagram: replies(to: second, interfaceIndex: Int32(primary.index)))
      let settled = engine.nextRequest()
      #expect(settled == nil)
      #expect(engine.status.primary == primary.name)
    }
    #expect(settle(answering: primary.index) == 1)
    let link = Int32(other.index)

    // A nexthop object on the other link, a default route through it, then the object deleted.
    _ = engine.ingest(datagram: nexthop(id: 7, interfaceIndex: link))
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: 0, metric: 5, nexthopID: 7))
    #expect(settle(answering: other.index) == 1, "an added route: its answer stands")
    try deletionIsConfirmed(nexthop(id: 7, interfaceIndex: link, deleted: true))

    // A group of one member on the other link: the group deleted.
    _ = engine.ingest(datagram: nexthop(id: 7, interfaceIndex: link))
    _ = engine.ingest(datagram: nexthop(id: 9, group: [7]))
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: 0, metric: 5, nexthopID: 9))
    _ = settle(answering: other.index)
    try deletionIsConfirmed(nexthop(id: 9, group: [7], deleted: true))

    // A route through the nexthop object deleted, the object kept.
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: 0, metric: 5, nexthopID: 7))
    _ = settle(answering: other.index)
    try deletionIsConfirmed(defaultRoute(interfaceIndex: 0, metric: 5, nexthopID: 7, deleted: true))
  }

  /// A deleted nexthop object's routes go under the routing lock after its `RTM_DELNEXTHOP`, and
  /// a lookup takes no lock: the lookups after a deletion go out behind an `RTM_GETLINK` of the
  /// loopback link, which the kernel answers only once the lock is free. Its reply changes
  /// nothing; lookups after other changes go out alone.
  @Test func lookupsAfterADeletionGoBehindABarrier() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    let other = try #require(engine.model.status().links.first { $0.index != primary.index })
    func types(_ datagram: [UInt8]) -> [UInt16] {
      NetlinkFraming.frames(in: datagram).compactMap { try? $0.get() }.map {
        UInt16($0[$0.startIndex + 4]) | UInt16($0[$0.startIndex + 5]) << 8
      }
    }
    let firstRequest = engine.nextRequest()
    let first = try #require(firstRequest)
    #expect(!types(first).contains(18), "no barrier without a deletion")
    _ = engine.ingest(datagram: replies(to: first, interfaceIndex: Int32(primary.index)))
    _ = engine.ingest(datagram: nexthop(id: 7, interfaceIndex: Int32(other.index)))
    let addedRequest = engine.nextRequest()
    let added = try #require(addedRequest)
    #expect(!types(added).contains(18))
    _ = engine.ingest(datagram: replies(to: added, interfaceIndex: Int32(primary.index)))

    _ = engine.ingest(datagram: nexthop(id: 7, interfaceIndex: Int32(other.index), deleted: true))
    let afterDeletionRequest = engine.nextRequest()
    let afterDeletion = try #require(afterDeletionRequest)
    #expect(types(afterDeletion).first == 18, "RTM_GETLINK first: \(types(afterDeletion))")
    #expect(types(afterDeletion).dropFirst().allSatisfy { $0 == 26 })
    let barrier = Array(try #require(NetlinkFraming.frames(in: afterDeletion).first).get())
    func u32(at offset: Int) -> UInt32 {
      (0..<4).reduce(UInt32(0)) { $0 | UInt32(barrier[offset + $1]) << (8 * UInt32($1)) }
    }
    #expect(u32(at: 20) == 1, "the loopback link")
    // The kernel's answer to it: the loopback link as it is, with the barrier's sequence. It is
    // not decoded at all (1.5 kB of attributes on a real kernel, a quarter of the instructions
    // a deletion cost): not even one cut short counts as a malformed message.
    let sequence = u32(at: 8)
    let before = engine.model.status()
    _ = engine.ingest(datagram: loopbackLinkCutShort(sequence: sequence))
    #expect(engine.model.status() == before)
    #expect(engine.model.status().malformedMessages == 0)
    _ = engine.ingest(datagram: replies(to: afterDeletion, interfaceIndex: Int32(primary.index)))
    let settled = engine.nextRequest()
    #expect(settled == nil)
    #expect(engine.status.primary == primary.name)
  }

  /// What is still queued after an overrun is older than any new dump and has gaps, so the
  /// re-dump waits until the socket was read empty (the soak's netlink flood showed phantom
  /// links when a stale `RTM_NEWLINK` entered a dump requested too early).
  @Test func afterAnOverrunNothingIsRequestedUntilTheSocketIsDrained() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let primary = try #require(engine.model.status().primaryLink)
    engine.recoverFromOverrun()
    let beforeDrain = engine.nextRequest()
    #expect(beforeDrain == nil)
    _ = engine.ingest(datagram: defaultRoute(interfaceIndex: Int32(primary.index), metric: 5))
    let stillBeforeDrain = engine.nextRequest()
    #expect(stillBeforeDrain == nil)

    engine.socketDrained()
    let afterDrain = engine.nextRequest()
    let dump = try #require(afterDrain)
    let flags = UInt16(dump[6]) | UInt16(dump[7]) << 8  // nlmsghdr.nlmsg_flags, host order
    #expect(flags & NetlinkConstant.flagDump == NetlinkConstant.flagDump)
  }

  /// The kernel's answers to every lookup in `requests` (a datagram of `RTM_GETROUTE`s): the
  /// destination leaves through `interfaceIndex`.
  private func replies(to requests: [UInt8], interfaceIndex: Int32, portID: UInt32 = 0)
    -> [UInt8]
  {
    NetlinkFraming.frames(in: requests).flatMap { frame -> [UInt8] in
      guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
        RouteLookupRequest.isLookup(message.header)
      else { return [] }
      let family = bytes[bytes.startIndex + 16]
      let destination = Array(bytes.suffix(family == 2 ? 4 : 16))
      return route(
        type: Self.routeNew, family: family, sequence: message.header.sequence, portID: portID,
        destinationLength: UInt8(destination.count * 8),
        attributes: [
          (15, self.bytes(UInt32(254))), (1, destination), (4, self.bytes(interfaceIndex)),
        ])
    }
  }

  /// `RTM_NEWROUTE` notification: IPv4 default route via 192.0.2.254 in the main table, or
  /// through nexthop object `nexthopID` (`RTA_NH_ID`, no gateway or link of its own).
  private func defaultRoute(
    interfaceIndex: Int32, metric: UInt32, nexthopID: UInt32? = nil, sequence: UInt32 = 1,
    portID: UInt32 = 0, deleted: Bool = false
  ) -> [UInt8] {
    var through: [(UInt16, [UInt8])] = [(5, [192, 0, 2, 254]), (4, bytes(interfaceIndex))]
    if let nexthopID { through = [(30, bytes(nexthopID))] }
    return route(
      type: deleted ? Self.routeNew + 1 : Self.routeNew, family: 2, sequence: sequence,
      portID: portID, destinationLength: 0,
      attributes: [(15, bytes(UInt32(254))), (6, bytes(metric))] + through)
  }

  /// `RTM_NEWLINK` of the loopback link (index 1, up), as the kernel answers `RTM_GETLINK`.
  /// `RTM_NEWLINK` of the loopback link cut short: only the first 8 bytes of its 16-byte
  /// fixed header (family, pad, type ARPHRD_LOOPBACK, index 1), so decoding it would fail.
  private func loopbackLinkCutShort(sequence: UInt32) -> [UInt8] {
    let body: [UInt8] = [0, 0] + bytes(UInt16(772)) + bytes(Int32(1))
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + body.count), type: 16, flags: 0, sequence: sequence,
      portID: 0)
    return header.encoded + body
  }

  /// `RTM_NEWNEXTHOP` / `RTM_DELNEXTHOP`: an IPv4 nexthop object on `interfaceIndex`
  /// (`NHA_OIF`), or a group of `group` (`NHA_GROUP`, family `AF_UNSPEC`).
  private func nexthop(
    id: UInt32, interfaceIndex: Int32 = 0, group: [UInt32] = [], deleted: Bool = false
  ) -> [UInt8] {
    // struct nhmsg: family, scope, protocol, reserved, flags.
    var body: [UInt8] = [group.isEmpty ? 2 : 0, 0, 3, 0] + bytes(UInt32(0))
    var attributes: [(UInt16, [UInt8])] = [(1, bytes(id))]
    if group.isEmpty {
      attributes.append((5, bytes(interfaceIndex)))
    } else {
      // struct nexthop_grp: id, weight, high, reserved.
      attributes.append((2, group.flatMap { bytes($0) + [0, 0, 0, 0] }))
    }
    for (kind, payload) in attributes {
      body += bytes(UInt16(4 + payload.count)) + bytes(kind) + payload
    }
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + body.count), type: deleted ? 105 : 104, flags: 0,
      sequence: 1, portID: 0)
    return header.encoded + body
  }

  private func route(
    type: UInt16, family: UInt8, sequence: UInt32, portID: UInt32 = 0, destinationLength: UInt8,
    attributes: [(UInt16, [UInt8])]
  ) -> [UInt8] {
    // struct rtmsg: family, dst_len, src_len, tos, table main, proto boot, scope universe,
    // unicast, flags.
    var body: [UInt8] = [family, destinationLength, 0, 0, 254, 3, 0, 1] + bytes(UInt32(0))
    for (kind, payload) in attributes {
      body += bytes(UInt16(4 + payload.count)) + bytes(kind) + payload
    }
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + body.count), type: type, flags: 0, sequence: sequence,
      portID: portID)
    return header.encoded + body
  }

  private func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
  }
}
