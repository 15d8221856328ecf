import Netlink
import SystemCalls
import SystemPackage

/// The shared driver of live monitoring and replay: decodes datagrams, looks up sysfs facts for
/// new interface names, feeds the model, queues dumps the model asks for, asks the kernel where
/// traffic leaves (live only), and decides which statuses to publish (only once synchronized,
/// only when changed).
///
/// Live, as soon as a datagram changed something the answer depends on (after the replies to
/// the lookups in flight, if any: they may have been computed before that change), the engine
/// sends one `RTM_GETROUTE` lookup per family that has a usable link for the probe destinations
/// (a routing-table lookup, no packet) and publishes once the replies to lookups asked after the
/// last change are in, so the primary link is the one the kernel really uses.
/// In replay the model answers; the recorded answers (routes to one address) do not change it.
struct ReachabilityEngine: Sendable {
  /// Where sysfs facts of a new interface come from.
  enum FactsSource: Sendable {
    /// Read from the sysfs tree (live, and replays of captures without recorded facts).
    case sysfs(SysfsLinkFactsReader)
    /// Facts recorded in the capture itself (``LinkFactsComment``); unknown links get none.
    case recorded([String: LinkFacts])
  }

  /// What one datagram produced.
  struct Ingested {
    /// Problems worth logging (malformed messages, odd sysfs values).
    var warnings: [String] = []
    /// Facts looked up for new interfaces, to be kept with the datagram in a capture.
    var lookedUpFacts: [(name: String, facts: LinkFacts)] = []
    /// The kernel refused one kind of dump ``refusalLimit`` times in a row: the monitor cannot
    /// know the network, and stops.
    var failure: MonitorError?
  }

  /// Refusals of one kind of dump in a row after which the monitor gives up.
  static let refusalLimit = 3
  /// Refusals in a row, per kind of dump, since its last complete dump.
  private var refusals: [ObjectKind: Int] = [:]

  private(set) var model: ReachabilityModel
  private var factsSource: FactsSource
  private let asksKernel: Bool
  private var queuedDumps: [ObjectKind] = []
  /// After an overrun, what is still queued on the socket is older than any dump and has gaps
  /// (a lost `RTM_DELLINK` would let its stale `RTM_NEWLINK` enter the new dump's tables), so
  /// no request goes out until the socket was read empty (``socketDrained()``).
  private var awaitingDrain = false
  private var nextSequence: UInt32 = 1
  private(set) var lastPublished: NetworkStatus?
  private var isDirty = true
  private var needsLookup = false
  private var lookupsInFlight: [UInt32: UInt8] = [:]
  /// The netlink port id of the socket the lookups go out on (live): the kernel addresses its
  /// replies to it, while a notification caused by another program's request carries that
  /// program's port id and its sequence number, which may equal one of ours.
  var localPort: UInt32?
  /// The last lookup in flight was answered (see ``takeAnsweredLookups()``).
  private var answeredLookups = false
  /// The kernel notifies some changes before a lookup can see them, and a lookup takes no lock,
  /// so an answer to a lookup asked at once may still name what was deleted, and no later
  /// notification comes to correct it:
  /// - IPv4's `fib_table_delete` sends `RTM_DELROUTE` before it unlinks the route (the
  ///   benchmark's add/delete pairs kept a deleted route's link primary about once in 1,200
  ///   changes);
  /// - `remove_nexthop` sends `RTM_DELNEXTHOP` before it removes the routes that use the nexthop
  ///   object, and those go without a notification of their own.
  ///
  /// (A policy rule is unlinked before its `RTM_DELRULE`.) Both finish under the routing lock
  /// (RTNL), which a lookup does not take: so lookups after a deletion go out behind a
  /// ``RouteLookupRequest/barrier(sequence:)``, which the kernel answers only once the lock is
  /// free, and they see the change done (a loop of 3,000 nexthop deletions against the kernel
  /// kept the deleted object's link primary 2 times without either measure, once with the
  /// confirmations alone). An answer through the link of a route or nexthop object deleted since
  /// the last lookups is still asked for again, up to twice; then it stands (the link may have
  /// another route).
  static let confirmationLimit = 2
  /// The sequence number of the barrier in flight, whose reply is not a change.
  private var barrierInFlight: UInt32?
  /// Links of the routes and nexthop objects deleted since the last lookups were sent.
  private var deletedRouteLinks: [Int32] = []
  /// Links of the routes and nexthop objects deleted before the lookups in flight (and their
  /// confirmations).
  private var suspectLinks: [Int32] = []
  /// Lookups asked again since the last change (``confirmationLimit`` at most).
  private var confirmations = 0
  private var kernelEgress = ReachabilityModel.KernelAnswers()
  /// What the last status computed that only links, addresses, facts and hints change.
  private var statusCache = StatusCache()

  /// `live`: ask the kernel for the egress; otherwise (replay) the model answers.
  init(configuration: ReachabilityConfiguration, live: Bool, factsSource: FactsSource? = nil) {
    model = ReachabilityModel(
      overrides: configuration.interfaceOverrides,
      probeDestinations: (try? EgressProbeDestinations(
        addresses: configuration.egressProbeDestinations)) ?? EgressProbeDestinations())
    self.factsSource = factsSource ?? .sysfs(SysfsLinkFactsReader(root: configuration.sysfsRoot))
    asksKernel = live
  }

  /// The current conclusion (the kernel's egress where known).
  var status: NetworkStatus { model.status(kernelEgress: kernelEgress) }

  /// ``status``, through the cache that publishing keeps: what only links, addresses, facts
  /// and hints change is not computed again, and a status from the same inputs as one of the
  /// last two is handed out again. A daemon asks for it at each run's start and end (issue #35:
  /// computed afresh, 1.2 % of the daemon's CPU per run).
  mutating func cachedStatus() -> NetworkStatus {
    model.status(kernelEgress: kernelEgress, cache: &statusCache)
  }

  /// Records facts a capture carries for `name`, used when that link next appears.
  mutating func recordFacts(_ facts: LinkFacts, forInterface name: String) {
    guard case .recorded(var known) = factsSource else { return }
    known[name] = facts
    factsSource = .recorded(known)
  }

  /// Feeds every message of one datagram (received, or a request we sent).
  mutating func ingest(datagram: [UInt8]) -> Ingested {
    var result = Ingested()
    for frame in NetlinkFraming.frames(in: datagram) {
      if isBarrierReply(frame) {
        // The loopback link as it is (about 1.5 kB of attributes), or an error: nothing
        // changed, and nothing in it is worth decoding.
        barrierInFlight = nil
        continue
      }
      let message: RtnetlinkMessage
      do {
        message = try RtnetlinkParser.parse(try frame.get())
      } catch {
        model.recordMalformed()
        isDirty = true
        result.warnings.append("skipped \(error)")
        continue
      }
      if RouteLookupRequest.isLookup(message.header), takeLookupReply(message) { continue }
      if asksKernel {
        switch message.payload {
        case .route(let route, .delete): deletedRouteLinks += model.tables.interfaces(of: route)
        case .nexthop(let nexthop, .delete):
          deletedRouteLinks += model.tables.interfaces(of: nexthop)
        default: break
        }
      }
      if case .link(let link, .new) = message.payload, model.needsFacts(forInterface: link.name) {
        let facts = lookUpFacts(forInterface: link.name, warnings: &result.warnings)
        model.setFacts(facts, forInterface: link.name)
        result.lookedUpFacts.append((link.name, facts))
      }
      let effects = model.apply(message)
      if let kind = effects.completedDump { refusals[kind] = nil }
      if let refusal = effects.refusedDump, asksKernel {
        let count = refusals[refusal.kind, default: 0] + 1
        refusals[refusal.kind] = count
        let error = SystemCallError(
          "netlink \(refusal.kind) dump", errno: Errno(rawValue: -refusal.code))
        if count >= Self.refusalLimit {
          result.failure = .dumpRefused(error, times: count)
        } else {
          result.warnings.append("the kernel refused a dump (\(error)): dumping it again")
        }
      }
      if asksKernel { requestDumps(effects.resync) }  // a replay holds the dumps that were made
      if effects.changed {
        isDirty = true
        confirmations = 0
        // Even a change read before the replies to the lookups in flight is asked about again:
        // the kernel answers a lookup without the routing lock (RTM_GETROUTE is
        // RTNL_FLAG_DOIT_UNLOCKED), so another CPU may change a route after the answer was
        // computed yet queue its notification before the reply.
        needsLookup = asksKernel
      } else if asksKernel, ReachabilityModel.mayChangeEgress(message) {
        // The model saw no change, but the kernel's tables may have moved (a replaced alias
        // the model cannot tell apart): the kernel's answer decides.
        isDirty = true
        needsLookup = true
        confirmations = 0
      }
    }
    return result
  }

  /// Whether `frame` is the kernel's reply to the barrier in flight (addressed to our socket).
  private func isBarrierReply(_ frame: NetlinkFraming.Frame) -> Bool {
    guard let barrier = barrierInFlight, case .success(let bytes) = frame,
      let header = NetlinkHeader(decoding: bytes)
    else { return false }
    return header.sequence == barrier && RouteLookupRequest.isLookup(header)
      && localPort.map { header.portID == $0 } ?? true
  }

  /// The families with a usable link: one without has no egress whatever the kernel says.
  private func familiesToAsk() -> [UInt8] {
    [NetlinkConstant.familyIPv4, NetlinkConstant.familyIPv6].filter {
      model.hasUsableLink(family: $0)
    }
  }

  /// Whether the last lookup in flight was answered since the last call. Its reply came after
  /// everything the kernel had queued before answering, so the batch is complete then.
  mutating func takeAnsweredLookups() -> Bool {
    defer { answeredLookups = false }
    return answeredLookups
  }

  private func lookUpFacts(forInterface name: String, warnings: inout [String]) -> LinkFacts {
    switch factsSource {
    case .sysfs(let reader):
      let lookup = reader.facts(forInterface: name)
      warnings += lookup.warnings
      return lookup.facts
    case .recorded(let known):
      return known[name] ?? .none
    }
  }

  /// Takes a reply (or error) to one of our outstanding lookups and says whether it was one.
  /// Anything else with a lookup sequence number goes on to the model like any message: a
  /// notification caused by another program's request, or, in a capture, our own request and
  /// the kernel's answers (a route to one address, which the model ignores).
  private mutating func takeLookupReply(_ message: RtnetlinkMessage) -> Bool {
    guard let family = lookupsInFlight[message.header.sequence],
      localPort.map({ message.header.portID == $0 }) ?? true
    else { return false }
    let answer: ReachabilityModel.KernelEgress
    switch message.payload {
    case .route(let route, .new):
      guard let index = route.interfaceIndices.first, route.type == NetlinkConstant.routeTypeUnicast
      else {
        answer = .unreachable
        break
      }
      answer = .route(
        interfaceIndex: index, table: route.table, metric: family == 10 ? route.metric : nil)
    case .error(let code) where code == 0:
      return true  // an acknowledgement; the reply itself comes (or came) separately
    case .error:
      answer = .unreachable
    default:
      return false
    }
    lookupsInFlight[message.header.sequence] = nil
    answeredLookups = lookupsInFlight.isEmpty
    if kernelEgress[family] != answer {
      kernelEgress[family] = answer
      isDirty = true
    }
    if confirmations < Self.confirmationLimit, case .route(let index, _, _) = answer,
      suspectLinks.contains(index)
    {
      confirmations += 1
      needsLookup = true
    }
    return true
  }

  /// Events were lost (`ENOBUFS`), lookup replies perhaps among them: count the overrun, dump
  /// everything again and ask the kernel afresh.
  mutating func recoverFromOverrun() {
    model.recordOverrun()
    isDirty = true
    awaitingDrain = true
    requestDumps(ObjectKind.allCases)
    lookupsInFlight = [:]
    barrierInFlight = nil
    answeredLookups = false
    needsLookup = asksKernel
  }

  /// Everything queued on the socket was read: requests held back after an overrun may go.
  mutating func socketDrained() {
    awaitingDrain = false
  }

  /// Queues dumps of `kinds` (a kind already waiting is not queued twice).
  mutating func requestDumps(_ kinds: [ObjectKind]) {
    for kind in kinds where !queuedDumps.contains(kind) { queuedDumps.append(kind) }
  }

  /// The next request to send: a dump (already fed to the model) while dumps are queued, then,
  /// live, the egress lookups when something changed since the last ones. `nil` while a dump
  /// or lookups are outstanding, after an overrun until the socket was drained, or nothing is
  /// due.
  mutating func nextRequest() -> [UInt8]? {
    guard !awaitingDrain, !model.isDumping, lookupsInFlight.isEmpty else { return nil }
    if !queuedDumps.isEmpty {
      let kind = queuedDumps.removeFirst()
      let request = DumpRequest.message(for: kind, sequence: nextSequence)
      nextSequence &+= 1
      _ = ingest(datagram: request)
      return request
    }
    guard needsLookup, model.isSynchronized else { return nil }
    needsLookup = false
    if confirmations == 0 { suspectLinks.removeAll(keepingCapacity: true) }
    suspectLinks += deletedRouteLinks
    deletedRouteLinks.removeAll(keepingCapacity: true)
    let families = familiesToAsk()
    guard !families.isEmpty else { return nil }
    var datagram: [UInt8] = []
    if !suspectLinks.isEmpty {
      let sequence = (nextSequence & ~RouteLookupRequest.sequenceMarker)
      nextSequence &+= 1
      datagram += RouteLookupRequest.barrier(sequence: sequence)
      barrierInFlight = sequence | RouteLookupRequest.sequenceMarker
    }
    for family in families {
      let sequence = (nextSequence & ~RouteLookupRequest.sequenceMarker)
      nextSequence &+= 1
      datagram += RouteLookupRequest.message(
        destination: model.probeDestinations.destination(family: family), sequence: sequence)
      lookupsInFlight[sequence | RouteLookupRequest.sequenceMarker] = family
    }
    return datagram
  }

  /// Applies a change of the link hints (NetworkManager, nl80211, connectivity probe).
  mutating func updateHints(_ change: (inout LinkHints) -> Void) {
    change(&model.hints)
    isDirty = true
  }

  /// Replaces the metered overrides (a config reload): the next status classifies with them.
  mutating func setOverrides(_ overrides: InterfaceOverrides) {
    guard overrides != model.overrides else { return }
    model.overrides = overrides
    isDirty = true
  }

  /// The status to publish now, if synchronized, settled (no dump running; live, the kernel
  /// answered the lookups for the latest change) and different from the last one published.
  mutating func takePublishableStatus() -> NetworkStatus? {
    guard isDirty, model.isSynchronized, !model.isDumping, queuedDumps.isEmpty,
      lookupsInFlight.isEmpty, !needsLookup
    else { return nil }
    isDirty = false
    let status = model.status(kernelEgress: kernelEgress, cache: &statusCache)
    guard status != lastPublished else { return nil }
    lastPublished = status
    return status
  }
}
