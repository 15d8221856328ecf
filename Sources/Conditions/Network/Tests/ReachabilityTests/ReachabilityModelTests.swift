import Netlink
import Reachability
import Testing

/// Model rules driven by hand-made messages: dumps replace tables, and the events after which
/// the kernel may have dropped routes silently ask for a route dump.
@Suite struct ReachabilityModelTests {
  private func message(
    _ payload: RtnetlinkMessage.Payload, sequence: UInt32 = 0, multi: Bool = false
  )
    -> RtnetlinkMessage
  {
    RtnetlinkMessage(
      header: NetlinkHeader(
        length: 0, type: 0, flags: multi ? NetlinkConstant.flagMulti : 0, sequence: sequence,
        portID: 0),
      payload: payload)
  }

  private let link = LinkInfo(
    family: 0, index: 2, name: "enp3s0", flags: 0x10041, hardwareType: 1, kind: nil)
  private let address = AddressInfo(
    family: 2, interfaceIndex: 2, prefixLength: 24, scope: 0, flags: 0, address: [192, 0, 2, 1])
  private let route = RouteInfo(
    family: 2, table: 254, type: 1, routingProtocol: 4, destinationPrefixLength: 0,
    destination: [], metric: 100, interfaceIndices: [2])

  private func reachableModel() -> ReachabilityModel {
    var model = ReachabilityModel()
    model.apply(message(.link(link, .new)))
    model.apply(message(.address(address, .new)))
    model.apply(message(.route(route, .new)))
    return model
  }

  @Test func eventsOnlyCaptureIsSynchronizedAndReachable() {
    let model = reachableModel()
    #expect(model.isSynchronized)
    #expect(model.status().primary == "enp3s0")
  }

  @Test func linkDownDropsItsRoutesWithoutADumpAndCarrierLossKeepsThem() {
    var model = reachableModel()
    var noCarrier = link
    noCarrier.flags = 0x1  // up, no carrier: the kernel keeps the route
    #expect(model.apply(message(.link(noCarrier, .new))).resync == [])
    #expect(!model.status().isReachable)
    #expect(model.apply(message(.link(link, .new))).changed)
    #expect(model.status().primary == "enp3s0")
    var down = link
    down.flags = 0  // set down: the kernel drops the route without RTM_DELROUTE
    #expect(model.apply(message(.link(down, .new))).resync == [])
    #expect(model.apply(message(.link(link, .new))).changed)
    #expect(!model.status().isReachable, "the route must not come back with the link")
  }

  @Test func nonDefaultRoutesAndRepeatedObjectsChangeNothing() {
    var model = reachableModel()
    #expect(!model.apply(message(.nonDefaultRoute)).changed)
    #expect(!model.apply(message(.route(route, .new))).changed)
    #expect(!model.apply(message(.link(link, .new))).changed)
  }

  @Test func removingTheLastIPv4AddressDropsTheLinksIPv4RoutesWithoutADump() {
    var model = reachableModel()
    #expect(model.apply(message(.address(address, .delete))).resync == [])
    model.apply(message(.address(address, .new)))
    #expect(!model.status().isReachable, "the kernel flushed the route with the last address")
  }

  @Test func removingAnotherAddressKeepsTheRouteUnlessItIsTheSource() {
    var model = reachableModel()
    var second = address
    second.address = [192, 0, 2, 2]
    model.apply(message(.address(second, .new)))
    model.apply(message(.address(second, .delete)))
    #expect(model.status().isReachable)
    var sourced = route
    sourced.preferredSource = [192, 0, 2, 2]
    model.apply(message(.address(second, .new)))
    model.apply(message(.route(sourced, .new)))
    model.apply(message(.address(second, .delete)))
    #expect(!model.status().isReachable, "a route preferring the removed source goes with it")
  }

  @Test func addressRemovedDuringARouteDumpKeepsRoutesOfALinkWithAddressesLeft() {
    var model = reachableModel()
    var second = address
    second.address = [192, 0, 2, 2]
    model.apply(message(.address(second, .new)))
    model.apply(message(.dumpRequest(.route), sequence: 9))
    model.apply(message(.route(route, .new), sequence: 9, multi: true))
    model.apply(message(.address(second, .delete)))
    model.apply(message(.done, sequence: 9, multi: true))
    #expect(model.status().isReachable)
  }

  @Test func completedRouteDumpDropsRoutesTheKernelRemovedSilently() {
    var model = reachableModel()
    model.apply(message(.dumpRequest(.route), sequence: 9))
    #expect(model.isDumping)
    #expect(model.status().isReachable)  // old table stays until the dump completes
    model.apply(message(.done, sequence: 9, multi: true))
    #expect(!model.isDumping)
    #expect(!model.status().isReachable)
  }

  @Test func eventDuringADumpIsKeptAfterIt() {
    var model = reachableModel()
    model.apply(message(.dumpRequest(.route), sequence: 9))
    model.apply(message(.route(route, .delete)))
    var replacement = route
    replacement.metric = 5
    model.apply(message(.route(replacement, .new)))
    model.apply(message(.done, sequence: 9, multi: true))
    #expect(model.status().isReachable)
  }

  @Test func interruptedDumpIsRepeatedAndOverrunDumpsEverything() {
    var model = reachableModel()
    model.apply(message(.dumpRequest(.address), sequence: 3))
    var done = message(.done, sequence: 3, multi: true)
    done.header.flags |= NetlinkConstant.flagDumpInterrupted
    #expect(model.apply(done).resync == [.address])
    #expect(model.apply(message(.overrun)).resync == ObjectKind.allCases)
  }

  @Test func overrunsAreCountedInTheStatus() {
    var model = reachableModel()
    #expect(model.status().netlinkOverruns == 0)
    model.apply(message(.overrun))
    model.recordOverrun()
    #expect(model.netlinkOverruns == 2)
    #expect(model.status().netlinkOverruns == 2)
    #expect(model.status().isReachable)
  }

  @Test func linkRemovalForgetsItsAddressesAndRoutes() {
    var model = reachableModel()
    model.apply(message(.link(link, .delete)))
    #expect(model.status().links.isEmpty)
    model.apply(message(.link(link, .new)))
    #expect(!model.status().isReachable)
  }
}
