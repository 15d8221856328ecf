import Backgrounder
import Locking
import Netlink

/// How a run's bytes are counted. One implementation per source of counts, chosen once by the
/// daemon; a run's record says which one counted it (``ByteAccounting``), never silently one
/// for the other.
///
/// ``CgroupByteAccounting`` (`accounting: "cgroup"`): the run's own packets, counted by the
/// kernel under its cgroup v2 (``RunByteCounters``), where the daemon has a delegated cgroup and
/// may load BPF programs; ``LinkCounterAccounting`` (`accounting: "link"`) elsewhere, and for a
/// run without a cgroup of its own: the primary link's interface counters, approximate (other
/// traffic on the link counts too).
protocol RunByteAccounting: Sendable {
  /// Which accounting this is.
  var kind: ByteAccounting { get }
  /// Starts counting a run that starts under `conditions` (their primary link).
  func begin(under conditions: NetworkConditions) -> any RunByteSession
  /// What `status` and `doctor` should say about the counting (bytes that went uncounted).
  func problems() -> [HealthProblem]
  /// The bytes of runs that went uncounted since the daemon started (the kernel's counters
  /// were full), as of the last run's count.
  var uncountedBytes: UInt64 { get }
}

extension RunByteAccounting {
  func problems() -> [HealthProblem] { [] }
  var uncountedBytes: UInt64 { 0 }
}

/// One run's counting, from ``RunByteAccounting/begin(under:)`` to ``finish(under:)``.
protocol RunByteSession: Sendable {
  /// The run's cgroup (nil: it has none) exists and no process is in it yet.
  func starting(inCgroup cgroup: String?)
  /// Reads the counts now (the primary link may have changed to `conditions`' one): the
  /// run's bytes so far.
  func read(under conditions: NetworkConditions) -> RunNetworkBytes
  /// The run ended: its bytes.
  func finish(under conditions: NetworkConditions) -> RunNetworkBytes
}

extension RunByteSession {
  func starting(inCgroup cgroup: String?) {}
}

/// ``ByteAccounting/link``: the primary link's `IFLA_STATS64` counters, read at the run's
/// start, at each reading (a change of primary link closes a segment, split metered or not by
/// the link it was on) and at its end. Reading costs one `RTM_GETLINK` round trip; nothing is
/// read between runs.
struct LinkCounterAccounting: RunByteAccounting {
  /// Reads an interface's counters; nil when it cannot (gone, not permitted).
  var readCounters: @Sendable (String) -> LinkCounters? = { [reader = LinkCounters.Reader()] in
    try? reader.read(interface: $0)
  }

  var kind: ByteAccounting { .link }

  func begin(under conditions: NetworkConditions) -> any RunByteSession {
    LinkCounterSession(readCounters: readCounters, start: reading(conditions))
  }

  fileprivate func reading(_ conditions: NetworkConditions) -> LinkByteMeter.Reading? {
    Self.reading(conditions, readCounters)
  }

  static func reading(
    _ conditions: NetworkConditions, _ read: (String) -> LinkCounters?
  ) -> LinkByteMeter.Reading? {
    guard conditions.isReachable, let link = conditions.primaryLink, let counters = read(link)
    else { return nil }
    return LinkByteMeter.Reading(
      interface: link, metered: conditions.isDataMetered, received: counters.receivedBytes,
      sent: counters.sentBytes)
  }
}

/// One run's ``LinkByteMeter``, read from the run's worker and its once-a-second sampler.
final class LinkCounterSession: RunByteSession {
  private let readCounters: @Sendable (String) -> LinkCounters?
  private let meter: Lock<LinkByteMeter>

  init(readCounters: @escaping @Sendable (String) -> LinkCounters?, start: LinkByteMeter.Reading?) {
    self.readCounters = readCounters
    self.meter = Lock(LinkByteMeter(start: start))
  }

  func read(under conditions: NetworkConditions) -> RunNetworkBytes {
    advance(to: conditions, finishing: false)
  }

  func finish(under conditions: NetworkConditions) -> RunNetworkBytes {
    advance(to: conditions, finishing: true)
  }

  private func advance(to conditions: NetworkConditions, finishing: Bool) -> RunNetworkBytes {
    meter.withLock { meter in
      // The segment's own link read again closes it; the link now (the same, another, or
      // none) opens the next.
      let end = meter.segmentStart.flatMap { start in
        readCounters(start.interface).map {
          LinkByteMeter.Reading(
            interface: start.interface, metered: start.metered, received: $0.receivedBytes,
            sent: $0.sentBytes)
        }
      }
      var next: LinkByteMeter.Reading?
      if !finishing {
        if let end, conditions.primaryLink == end.interface, conditions.isReachable {
          next = end
          next?.metered = conditions.isDataMetered
        } else {
          next = LinkCounterAccounting.reading(conditions, readCounters)
        }
      }
      meter.advance(end: end, next: next)
      return meter.bytes
    }
  }
}
