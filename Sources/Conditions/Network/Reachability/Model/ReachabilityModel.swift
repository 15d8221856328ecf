import Glibc
import Netlink

/// The pure reachability state machine: fed with decoded rtnetlink messages (and sysfs facts
/// looked up by its driver), it answers reachable / metered / primary. No I/O.
///
/// Dumps are framed by the monitor's own dump request (kept in captures) and `NLMSG_DONE`: a
/// completed dump replaces that table. Only what decides the answer is kept (see
/// ``NetworkTables``): the cost of a message does not depend on the size of the FIB. What the
/// kernel removes without telling (routes of a link set down, of a removed IPv4 address) is
/// removed here the same way, so no re-dump of a large FIB is needed; carrier loss keeps plain
/// routes, they only stop counting (it removes the link's nexthop objects and their routes). Dumps are repeated after an overrun or an interrupted dump.
public struct ReachabilityModel: Sendable, Equatable {
  /// What the driver should do after a message.
  public struct Effects: Sendable, Equatable {
    /// Tables to dump again (the kernel may have changed them without telling).
    public var resync: [ObjectKind] = []
    /// The message changed what the model knows (the answer may have changed).
    public var changed = false
    /// The kernel refused a dump, or gave it up partway: its table is not known (``resync``
    /// asks again).
    public var refusedDump: DumpRefusal?
    /// A dump of this kind ended complete.
    public var completedDump: ObjectKind?
  }

  /// A dump the kernel answered with an error instead of its objects.
  public struct DumpRefusal: Sendable, Equatable {
    public var kind: ObjectKind
    /// The negative errno of the kernel's `NLMSG_ERROR` or `NLMSG_DONE`.
    public var code: Int32
  }

  private struct PendingDump: Sendable, Equatable {
    var kind: ObjectKind
    var sequence: UInt32
    /// Only the `kind` part is filled: the objects dumped so far, plus events since.
    var tables = NetworkTables()
  }

  private(set) var tables = NetworkTables()
  private var pendingDump: PendingDump?
  private var facts: [String: LinkFacts] = [:]
  private var hasRequestedDump = false
  /// A rule dump completed: ``NetworkTables/rules`` is the kernel's whole rule list.
  private(set) var knowsRules = false
  /// The first complete state is known (a route dump finished, or a capture without dumps
  /// started with events).
  public private(set) var isSynchronized = false
  /// Malformed messages skipped so far.
  public private(set) var malformedMessages = 0
  /// Receive-buffer overruns (`ENOBUFS`: events lost, everything dumped again) so far.
  public private(set) var netlinkOverruns = 0
  /// User overrides for the metered classification.
  public var overrides: InterfaceOverrides
  /// The destinations whose route decides the primary link, one per family.
  public var probeDestinations: EgressProbeDestinations
  /// What NetworkManager, nl80211 and the connectivity probe say (see ``LinkHints``).
  public var hints = LinkHints()

  /// Creates an empty model.
  public init(
    overrides: InterfaceOverrides = InterfaceOverrides(),
    probeDestinations: EgressProbeDestinations = EgressProbeDestinations()
  ) {
    self.overrides = overrides
    self.probeDestinations = probeDestinations
  }

  /// A dump is in progress: its request was seen, its `NLMSG_DONE` not yet.
  public var isDumping: Bool { pendingDump != nil }

  /// Whether sysfs facts for `name` are still unknown.
  public func needsFacts(forInterface name: String) -> Bool { facts[name] == nil }

  /// Records sysfs facts for the interface `name`.
  public mutating func setFacts(_ newFacts: LinkFacts, forInterface name: String) {
    facts[name] = newFacts
  }

  /// Counts one skipped malformed message.
  public mutating func recordMalformed() { malformedMessages += 1 }

  /// Counts one receive-buffer overrun.
  public mutating func recordOverrun() { netlinkOverruns += 1 }

  /// Applies one message and says what the driver should do next.
  @discardableResult
  public mutating func apply(_ message: RtnetlinkMessage) -> Effects {
    var effects = Effects()
    let header = message.header
    switch message.payload {
    case .dumpRequest(let kind):
      hasRequestedDump = true
      pendingDump = PendingDump(kind: kind, sequence: header.sequence)
    case .done, .error:
      guard let pending = pendingDump, pending.sequence == header.sequence else { break }
      pendingDump = nil
      if case .error(let code) = message.payload, code != 0,
        !(pending.kind == .nexthop && code == -EOPNOTSUPP)
      {
        // Not "no objects": what was known stays, and the table is dumped again. A kernel
        // without nexthop objects (before 5.3) has none, and says so with EOPNOTSUPP.
        effects.refusedDump = DumpRefusal(kind: pending.kind, code: code)
        effects.resync.append(pending.kind)
        break
      }
      effects.completedDump = pending.kind
      if message.payload == .done {
        effects.changed = pending.tables != tables.part(pending.kind)
        tables.replace(pending.kind, from: pending.tables)
        if pending.kind == .rule { knowsRules = true }
        if header.flags & NetlinkConstant.flagDumpInterrupted != 0 {
          effects.resync.append(pending.kind)
        }
      }
      if pending.kind == .route {
        effects.changed = effects.changed || !isSynchronized
        isSynchronized = true
      }
    case .overrun:
      netlinkOverruns += 1
      effects.resync = ObjectKind.allCases
    case .link, .address, .route, .rule, .nexthop:
      if header.isMultipart, pendingDump?.sequence == header.sequence {
        pendingDump?.tables.apply(message.payload, flags: header.flags)
        break
      }
      if !hasRequestedDump && !isSynchronized {
        isSynchronized = true
        effects.changed = true
      }
      if case .link(let link, .delete) = message.payload { facts[link.name] = nil }
      if case .link(let link, .new) = message.payload, let known = tables.links[link.index] {
        let carrier = NetlinkConstant.interfaceRunning | NetlinkConstant.interfaceLowerUp
        if known.isUp, !link.isUp {
          tables.linkWentDown(link.index)
          pendingDump?.tables.linkWentDown(link.index)
        } else if link.isUp, known.flags & carrier != 0, link.flags & carrier == 0 {
          tables.linkLostCarrier(link.index)
          pendingDump?.tables.linkLostCarrier(link.index)
        }
      }
      if tables.apply(message.payload, flags: header.flags) { effects.changed = true }
      if let kind = message.payload.objectKind, pendingDump?.kind == kind {
        pendingDump?.tables.apply(message.payload, flags: header.flags)
      }
      if case .address(let address, .delete) = message.payload,
        address.family == NetlinkConstant.familyIPv4
      {
        let last = tables.hasNoIPv4Address(address.interfaceIndex)
        tables.ipv4AddressRemoved(address, lastOfLink: last)
        pendingDump?.tables.ipv4AddressRemoved(address, lastOfLink: last)
      }
    case .nonDefaultRoute, .unrelated:
      break
    }
    return effects
  }

  /// Whether `message` may change where traffic to a probe destination leaves, whatever the
  /// model made of it: then only the kernel's own lookup can tell (the model decides when to
  /// ask, the kernel's answer decides the primary link). Default routes of any table (the
  /// kernel's replace, append and sibling rules; a replaced alias may look unchanged here),
  /// policy rules and nexthop objects (replaced under an unchanged route) may. So may the
  /// notification of a route to a specific prefix: live, the socket's filter lets through only
  /// those covering a probe destination (`NotificationFilter`); a dump's are not asked about
  /// one by one (the dump's end is). Links and addresses count when the model changed.
  public static func mayChangeEgress(_ message: RtnetlinkMessage) -> Bool {
    switch message.payload {
    case .route(let route, _): route.isDefault
    case .nonDefaultRoute: !message.header.isMultipart
    case .rule, .nexthop: true
    default: false
    }
  }

  /// Facts known for `name` (none when sysfs was not consulted).
  func facts(forInterface name: String) -> LinkFacts { facts[name] ?? .none }

  /// Every interface's facts, by name.
  var linkFacts: [String: LinkFacts] { facts }
}

extension NetworkTables {
  /// Only the `kind` part of these tables (to compare with a dump of that kind).
  fileprivate func part(_ kind: ObjectKind) -> NetworkTables {
    var part = NetworkTables()
    part.replace(kind, from: self)
    return part
  }
}

extension RtnetlinkMessage.Payload {
  fileprivate var objectKind: ObjectKind? {
    switch self {
    case .link: .link
    case .address: .address
    case .route: .route
    case .rule: .rule
    case .nexthop: .nexthop
    default: nil
    }
  }
}
