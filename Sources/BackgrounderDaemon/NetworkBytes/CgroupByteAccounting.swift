import Backgrounder
import CSystemShims
import Glibc
import Locking
import SystemCalls

/// A run's own bytes, counted by the kernel: a `cgroup_skb` program at the ingress and the
/// egress hook of the run's cgroup (cgroup v2) adds each packet's length to a map, per
/// interface and direction (``csystem_run_bytes_program_load``). Only the run's sockets are
/// counted — other programs on the same link are not — and only packets that cross an
/// interface other than loopback.
///
/// Closing the counter closes the map; the programs go with the run's cgroup.
final class CgroupByteCounter: Sendable {
  /// One counted key: the interface index and the direction.
  struct Key: Hashable, Sendable {
    var interfaceIndex: UInt32
    var received: Bool
  }

  private let map: Int32

  /// Loads the two programs on a new map and attaches them to the cgroup v2 directory
  /// `cgroup`. Throws when the kernel refuses (no `CAP_BPF`, no cgroup BPF, a program attached
  /// above that forbids others).
  init(cgroup: String) throws(SystemCallError) {
    map = try systemCall("bpf map create") { csystem_run_bytes_map_create() }
    do throws(SystemCallError) {
      for ingress in [false, true] {
        try CgroupProgram.attach(to: cgroup, ingress: ingress) { [map] in
          csystem_run_bytes_program_load(map, ingress ? 1 : 0)
        }
      }
    } catch {
      close(map)
      throw error
    }
  }

  deinit { close(map) }

  /// The bytes counted so far, per interface and direction.
  func read() throws(SystemCallError) -> [Key: UInt64] {
    var keys = [UInt32](repeating: 0, count: 64)
    var values = [UInt64](repeating: 0, count: 64)
    while true {
      let count = try systemCall("bpf map read") {
        csystem_run_bytes_read(map, &keys, &values, Int32(keys.count))
      }
      // A full buffer may have left keys out: read again into a larger one.
      guard Int(count) == keys.count else {
        var counts: [Key: UInt64] = [:]
        for index in 0..<Int(count) {
          let key = keys[index]
          counts[
            Key(
              interfaceIndex: key & ~CSYSTEM_RUN_BYTES_INGRESS,
              received: key & CSYSTEM_RUN_BYTES_INGRESS != 0)] = values[index]
        }
        return counts
      }
      keys = [UInt32](repeating: 0, count: keys.count * 2)
      values = [UInt64](repeating: 0, count: values.count * 2)
    }
  }

  /// Whether this kernel and this process can count a run's bytes per cgroup: a map and a
  /// program load (not attached anywhere), or the error that says why not.
  static func probe() -> SystemCallError? {
    let map = csystem_run_bytes_map_create()
    guard map >= 0 else { return SystemCallError.current("bpf map create") }
    defer { close(map) }
    return CgroupProgram.probe { csystem_run_bytes_program_load(map, 0) }
  }
}

/// Turns the per-interface counts of a ``CgroupByteCounter``, read from time to time, into a
/// run's bytes split metered or not: the bytes added on an interface between two readings are
/// metered when that interface was the primary link and metered at the first of the two (as
/// ``LinkByteMeter`` splits segments). Loopback's bytes are left out.
struct CgroupByteMeter: Sendable, Equatable {
  /// The interface index of loopback (left out).
  let loopback: UInt32
  private(set) var last: [CgroupByteCounter.Key: UInt64] = [:]
  /// The primary link's index when it was metered at the last reading.
  private var meteredInterface: UInt32?
  private(set) var bytes = RunNetworkBytes(accounting: .cgroup)

  init(loopback: UInt32, meteredInterface: UInt32?) {
    self.loopback = loopback
    self.meteredInterface = meteredInterface
  }

  /// Takes a reading: the counts now, and the primary link's index when it is metered now.
  mutating func advance(to counts: [CgroupByteCounter.Key: UInt64], meteredInterface next: UInt32?)
  {
    for (key, count) in counts where key.interfaceIndex != loopback {
      let added = Int64(clamping: count &- min(count, last[key] ?? 0))
      let metered = key.interfaceIndex == meteredInterface
      if key.received {
        bytes.received += added
        if metered { bytes.meteredReceived += added }
      } else {
        bytes.sent += added
        if metered { bytes.meteredSent += added }
      }
      last[key] = count
    }
    meteredInterface = next
  }
}

/// ``ByteAccounting/cgroup`` where a run has a cgroup v2 and the kernel lets the daemon attach
/// its counter there; ``ByteAccounting/link`` (`fallback`) for a run that has none or where the
/// attach failed — the run's record says which counted it, never one silently for the other.
struct CgroupByteAccounting: RunByteAccounting {
  var fallback = LinkCounterAccounting()
  /// Attaches a counter to a run's cgroup (a test may refuse).
  var attach: @Sendable (String) throws(SystemCallError) -> CgroupByteCounter = {
    (cgroup) throws(SystemCallError) in try CgroupByteCounter(cgroup: cgroup)
  }
  /// Interface indexes by name (`if_nametoindex`; 0 when there is none).
  var interfaceIndex: @Sendable (String) -> UInt32 = { if_nametoindex($0) }
  /// Told why a run's cgroup could not get a counter (the run is counted by the link).
  var refused: @Sendable (SystemCallError) -> Void = { _ in }

  var kind: ByteAccounting { .cgroup }

  func begin(under conditions: NetworkConditions) -> any RunByteSession {
    CgroupByteSession(accounting: self, conditions: conditions)
  }

  /// The primary link's index when `conditions` say it is metered.
  func meteredInterface(_ conditions: NetworkConditions) -> UInt32? {
    guard conditions.isReachable, conditions.isDataMetered, let link = conditions.primaryLink
    else { return nil }
    let index = interfaceIndex(link)
    return index == 0 ? nil : index
  }
}

/// One run counted by ``CgroupByteAccounting``: by its cgroup's counter once
/// ``starting(inCgroup:)`` attached one, else by the link's counters from then on.
final class CgroupByteSession: RunByteSession {
  private enum Counting {
    /// Not started yet (the conditions the run began under).
    case waiting(NetworkConditions)
    case cgroup(CgroupByteCounter, CgroupByteMeter)
    case link(any RunByteSession)
  }

  private let accounting: CgroupByteAccounting
  private let state: Lock<Counting>

  init(accounting: CgroupByteAccounting, conditions: NetworkConditions) {
    self.accounting = accounting
    state = Lock(.waiting(conditions))
  }

  func starting(inCgroup cgroup: String?) {
    state.withLock { state in
      guard case .waiting(let conditions) = state else { return }
      if let cgroup {
        do throws(SystemCallError) {
          let counter = try accounting.attach(cgroup)
          let meter = CgroupByteMeter(
            loopback: accounting.interfaceIndex("lo"),
            meteredInterface: accounting.meteredInterface(conditions))
          state = .cgroup(counter, meter)
          return
        } catch {
          accounting.refused(error)
        }
      }
      state = .link(accounting.fallback.begin(under: conditions))
    }
  }

  func read(under conditions: NetworkConditions) -> RunNetworkBytes {
    advance(under: conditions, finishing: false)
  }

  func finish(under conditions: NetworkConditions) -> RunNetworkBytes {
    advance(under: conditions, finishing: true)
  }

  private func advance(under conditions: NetworkConditions, finishing: Bool) -> RunNetworkBytes {
    state.withLock { state in
      switch state {
      case .waiting:
        // Never started (it could not be spawned): nothing crossed a link.
        return RunNetworkBytes(accounting: .link)
      case .link(let session):
        return finishing ? session.finish(under: conditions) : session.read(under: conditions)
      case .cgroup(let counter, var meter):
        // A failed read keeps what was counted before (the map does not go away while open).
        if let counts = try? counter.read() {
          meter.advance(to: counts, meteredInterface: accounting.meteredInterface(conditions))
          state = .cgroup(counter, meter)
        }
        return meter.bytes
      }
    }
  }
}
