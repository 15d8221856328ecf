import Glibc
import Netlink
import SystemCalls
import Testing

@testable import Reachability

/// A dump the kernel answers with an error (`NLMSG_ERROR`, or `NLMSG_DONE` carrying a negative
/// errno: the dump given up partway) is not an empty table: what was known stays, the table is
/// dumped again, and after ``ReachabilityEngine/refusalLimit`` refusals in a row the monitor
/// gives up instead of publishing a network it does not know.
@Suite struct DumpRefusalTests {
  private static let messageError: UInt16 = 2
  private static let messageDone: UInt16 = 3

  /// The header of `request` when it is a dump request of `kind`.
  private func dumpSequence(_ request: [UInt8]?, _ kind: ObjectKind) -> UInt32? {
    guard let request, let message = try? RtnetlinkParser.parse(request[...]),
      message.payload == .dumpRequest(kind)
    else { return nil }
    return message.header.sequence
  }

  /// The dumps asked for, each answered complete and empty, up to the next link dump.
  private func dumpsUntilTheLinkDump(_ engine: inout ReachabilityEngine) -> [ObjectKind] {
    var kinds: [ObjectKind] = []
    while let request = engine.nextRequest(),
      let message = try? RtnetlinkParser.parse(request[...]),
      case .dumpRequest(let kind) = message.payload
    {
      kinds.append(kind)
      if kind == .link { break }
      _ = engine.ingest(
        datagram: answer(type: Self.messageDone, sequence: message.header.sequence, code: 0))
    }
    return kinds
  }

  private func answer(type: UInt16, sequence: UInt32, code: Int32) -> [UInt8] {
    var body = withUnsafeBytes(of: code.littleEndian) { Array($0) }
    if type == Self.messageError { body += [UInt8](repeating: 0, count: NetlinkHeader.size) }
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size + body.count), type: type, flags: 2, sequence: sequence,
      portID: 0)
    return header.encoded + body
  }

  /// Sends every queued request, answering each dump with `reply` (nil: an empty `NLMSG_DONE`).
  private func answerDumps(
    _ engine: inout ReachabilityEngine, reply: (ObjectKind, UInt32) -> [UInt8]?
  ) -> [ReachabilityEngine.Ingested] {
    var ingested: [ReachabilityEngine.Ingested] = []
    while let request = engine.nextRequest() {
      guard let message = try? RtnetlinkParser.parse(request[...]),
        case .dumpRequest(let kind) = message.payload
      else { break }
      let sequence = message.header.sequence
      let datagram =
        reply(kind, sequence) ?? answer(type: Self.messageDone, sequence: sequence, code: 0)
      ingested.append(engine.ingest(datagram: datagram))
      if ingested.last?.failure != nil { break }
    }
    return ingested
  }

  @Test func aRefusedLinkDumpKeepsTheLinksAndIsDumpedAgain() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    let before = engine.model.status().links.map(\.name)
    #expect(!before.isEmpty)
    engine.recoverFromOverrun()
    engine.socketDrained()
    let sequence = try #require(dumpSequence(engine.nextRequest(), .link))
    let ingested = engine.ingest(
      datagram: answer(type: Self.messageError, sequence: sequence, code: -EBUSY))
    #expect(ingested.warnings.contains { $0.contains("refused a dump (netlink link dump: ") })
    #expect(ingested.failure == nil)
    #expect(engine.model.status().links.map(\.name) == before, "what was known stays")
    // The other dumps, then the link dump again.
    #expect(dumpsUntilTheLinkDump(&engine) == [.address, .rule, .nexthop, .route, .link])
  }

  /// The first dump of a new monitor: the route dump, the last, would make the model
  /// synchronized with no links at all; the link dump is asked again after it.
  @Test func aRefusedFirstDumpIsAskedAgain() throws {
    var engine = ReachabilityEngine(
      configuration: ReachabilityConfiguration(sysfsRoot: "/nonexistent"), live: true)
    engine.requestDumps(ObjectKind.allCases)
    // The link dump, given up partway: a negative errno in its NLMSG_DONE.
    let sequence = try #require(dumpSequence(engine.nextRequest(), .link))
    let ingested = engine.ingest(
      datagram: answer(type: Self.messageDone, sequence: sequence, code: -EINTR))
    #expect(ingested.warnings.contains { $0.contains("refused a dump (netlink link dump: ") })
    #expect(dumpsUntilTheLinkDump(&engine) == [.address, .rule, .nexthop, .route, .link])
  }

  @Test func threeRefusalsInARowStopTheMonitor() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    engine.recoverFromOverrun()
    engine.socketDrained()
    let ingested = answerDumps(&engine) { kind, sequence in
      kind == .route ? answer(type: Self.messageError, sequence: sequence, code: -ENOMEM) : nil
    }
    let failures = ingested.compactMap(\.failure)
    #expect(
      failures == [.dumpRefused(SystemCallError("netlink route dump", errno: .noMemory), times: 3)])
    #expect("\(failures[0])".contains("3 times in a row: netlink route dump: "))
  }

  @Test func aCompleteDumpBetweenRefusalsStartsTheCountAgain() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    var routeDumps = 0
    for _ in 0..<3 {
      engine.recoverFromOverrun()
      engine.socketDrained()
      let ingested = answerDumps(&engine) { kind, sequence in
        guard kind == .route else { return nil }
        routeDumps += 1
        // Refused twice, then complete: never three in a row.
        return routeDumps % 3 == 0
          ? nil : answer(type: Self.messageError, sequence: sequence, code: -EBUSY)
      }
      #expect(ingested.allSatisfy { $0.failure == nil })
    }
    #expect(routeDumps == 9)
  }

  @Test func aKernelWithoutNexthopObjectsHasNone() throws {
    var engine = try FixtureReplay.synchronizedLiveEngine()
    engine.recoverFromOverrun()
    engine.socketDrained()
    let ingested = answerDumps(&engine) { kind, sequence in
      kind == .nexthop
        ? answer(type: Self.messageError, sequence: sequence, code: -EOPNOTSUPP) : nil
    }
    #expect(ingested.allSatisfy { $0.warnings.isEmpty && $0.failure == nil })
    #expect(engine.nextRequest() == nil)
  }
}
