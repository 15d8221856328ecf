import Netlink

/// The pure reachability state machine: fed with decoded rtnetlink messages (and sysfs facts
/// looked up by its driver), it answers reachable / metered / primary. No I/O.
///
/// Dumps are framed by the monitor's own dump request (kept in captures) and `NLMSG_DONE`: a
/// completed dump replaces that table, so silently removed objects disappear.
public struct ReachabilityModel: Sendable, Equatable {
  /// What the driver should do after a message.
  public struct Effects: Sendable, Equatable {
    /// Tables to dump again (the kernel may have changed them without telling).
    public var resync: [ObjectKind] = []
  }

  private struct PendingDump: Sendable, Equatable {
    var kind: ObjectKind
    var sequence: UInt32
    var tables: NetworkTables
  }

  private(set) var tables = NetworkTables()
  private var pendingDump: PendingDump?
  private var facts: [String: LinkFacts] = [:]
  private var hasRequestedDump = false
  /// The first complete state is known (a route dump finished, or a capture without dumps
  /// started with events).
  public private(set) var isSynchronized = false
  /// Malformed messages skipped so far.
  public private(set) var malformedMessages = 0
  /// User overrides for the metered classification.
  public var overrides: InterfaceOverrides
  /// What NetworkManager, nl80211 and the connectivity probe say (see ``LinkHints``).
  public var hints = LinkHints()

  /// Creates an empty model.
  public init(overrides: InterfaceOverrides = InterfaceOverrides()) {
    self.overrides = overrides
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

  /// Applies one message and says what the driver should do next.
  @discardableResult
  public mutating func apply(_ message: RtnetlinkMessage) -> Effects {
    var effects = Effects()
    let header = message.header
    switch message.payload {
    case .dumpRequest(let kind):
      hasRequestedDump = true
      var fresh = tables
      fresh.clear(kind)
      pendingDump = PendingDump(kind: kind, sequence: header.sequence, tables: fresh)
    case .done, .error:
      guard let pending = pendingDump, pending.sequence == header.sequence else { break }
      if message.payload == .done {
        tables.replace(pending.kind, from: pending.tables)
        if header.flags & NetlinkConstant.flagDumpInterrupted != 0 {
          effects.resync.append(pending.kind)
        }
      }
      if pending.kind == .route { isSynchronized = true }
      pendingDump = nil
    case .overrun:
      effects.resync = ObjectKind.allCases
    case .link, .address, .route:
      if header.isMultipart, var pending = pendingDump, pending.sequence == header.sequence {
        pending.tables.apply(message.payload)
        pendingDump = pending
        break
      }
      if !hasRequestedDump { isSynchronized = true }
      effects.resync = resyncNeeded(after: message.payload)
      if case .link(let link, .delete) = message.payload { facts[link.name] = nil }
      tables.apply(message.payload)
      pendingDump?.tables.apply(message.payload)
    case .unrelated:
      break
    }
    return effects
  }

  /// The kernel drops IPv4 routes silently when a link goes down or loses carrier, and routes
  /// using a removed address: re-read the routes then.
  private func resyncNeeded(after payload: RtnetlinkMessage.Payload) -> [ObjectKind] {
    switch payload {
    case .link(let link, .new):
      guard let old = tables.links[link.index] else { return [] }
      let wasUsable = old.isUp && old.hasCarrier
      return wasUsable && !(link.isUp && link.hasCarrier) ? [.route] : []
    case .address(_, .delete):
      return [.route]
    default:
      return []
    }
  }

  /// Facts known for `name` (none when sysfs was not consulted).
  func facts(forInterface name: String) -> LinkFacts { facts[name] ?? .none }
}
