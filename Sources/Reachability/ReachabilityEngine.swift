import Netlink

/// The shared driver of live monitoring and replay: decodes datagrams, looks up sysfs facts for
/// new interface names, feeds the model, queues dumps the model asks for, and decides which
/// statuses to publish (only once synchronized, only when changed).
struct ReachabilityEngine: Sendable {
  private(set) var model: ReachabilityModel
  private let sysfs: SysfsLinkFactsReader
  private var queuedDumps: [ObjectKind] = []
  private var nextSequence: UInt32 = 1
  private(set) var lastPublished: NetworkStatus?

  init(configuration: ReachabilityConfiguration) {
    model = ReachabilityModel(
      overrides: InterfaceOverrides(
        metered: configuration.meteredOverrides, unmetered: configuration.unmeteredOverrides,
        meteredSSIDs: configuration.meteredSSIDs, unmeteredSSIDs: configuration.unmeteredSSIDs))
    sysfs = SysfsLinkFactsReader(root: configuration.sysfsRoot)
  }

  /// Feeds every message of one datagram (received, or a request we sent). Returns warnings.
  mutating func ingest(datagram: [UInt8]) -> [String] {
    var warnings: [String] = []
    for frame in NetlinkFraming.frames(in: datagram) {
      let message: RtnetlinkMessage
      do {
        message = try RtnetlinkParser.parse(try frame.get())
      } catch {
        model.recordMalformed()
        warnings.append("skipped \(error)")
        continue
      }
      if case .link(let link, .new) = message.payload, model.needsFacts(forInterface: link.name) {
        let lookup = sysfs.facts(forInterface: link.name)
        model.setFacts(lookup.facts, forInterface: link.name)
        warnings += lookup.warnings
      }
      requestDumps(model.apply(message).resync)
    }
    return warnings
  }

  /// Queues dumps of `kinds` (a kind already waiting is not queued twice).
  mutating func requestDumps(_ kinds: [ObjectKind]) {
    for kind in kinds where !queuedDumps.contains(kind) { queuedDumps.append(kind) }
  }

  /// The next dump request to send, already fed to the model; `nil` while a dump is running
  /// or nothing is queued.
  mutating func nextDumpRequest() -> [UInt8]? {
    guard !model.isDumping, !queuedDumps.isEmpty else { return nil }
    let kind = queuedDumps.removeFirst()
    let request = DumpRequest.message(for: kind, sequence: nextSequence)
    nextSequence &+= 1
    _ = ingest(datagram: request)
    return request
  }

  /// Applies a change of the link hints (NetworkManager, nl80211, connectivity probe).
  mutating func updateHints(_ change: (inout LinkHints) -> Void) {
    change(&model.hints)
  }

  /// The status to publish now, if synchronized and different from the last one published.
  mutating func takePublishableStatus() -> NetworkStatus? {
    guard model.isSynchronized else { return nil }
    let status = model.status()
    guard status != lastPublished else { return nil }
    lastPublished = status
    return status
  }
}
