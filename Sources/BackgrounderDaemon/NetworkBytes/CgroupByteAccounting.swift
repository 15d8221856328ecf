import Backgrounder
import CSystemShims
import Glibc
import Locking
import SystemCalls

/// What counts runs' bytes per cgroup: ``RunByteCounters`` in the daemon, a fake in tests.
protocol RunByteCounting: Sendable {
  /// Run cgroup `cgroup` (its id) starts: its entries are kept until ``counts(of:ending:)``
  /// reads them `ending`.
  func begin(_ cgroup: UInt64)
  /// The bytes counted for `cgroup` so far, per interface and direction; `ending`: the run
  /// ended, its entries go (and any left by cgroups that ended before).
  func counts(of cgroup: UInt64, ending: Bool) throws(SystemCallError) -> [RunByteCounters.Key:
    UInt64]
  /// The bytes of packets that found no room in the counters (a full map) since the start, as
  /// of the last ``counts(of:ending:)``.
  var uncountedBytes: UInt64 { get }
}

extension RunByteCounting {
  var uncountedBytes: UInt64 { 0 }
}

/// Runs' own bytes, counted by the kernel: two `cgroup_skb` programs, one at the ingress and one
/// at the egress hook, linked for the daemon's life to the directory of run cgroups (so they
/// run for every run cgroup below it), add each packet's length to one map under the cgroup of
/// its socket, its interface and its direction (``csystem_run_bytes_program_load``). Only
/// runs' sockets are counted — other programs on the same link are not, nor the daemon's own.
/// Nothing is done in the kernel when a run starts; its entries are read and deleted when it
/// ends. The links close with the daemon (a daemon killed with SIGKILL leaves no program
/// behind).
final class RunByteCounters: RunByteCounting {
  /// One counted key of a run: the interface index and the direction.
  struct Key: Hashable, Sendable {
    var interfaceIndex: UInt32
    var received: Bool
  }

  /// The map's entries by default: runs at once × interfaces × 2 directions.
  static let defaultCapacity: UInt32 = 16_384
  private let map: Int32
  private let links: [Int32]
  /// The cgroups of runs going on: entries of any other cgroup are left over (a packet after
  /// its run's last reading) and deleted at the next end.
  private let live = Lock<Set<UInt64>>([])
  private let uncounted = Lock<UInt64>(0)

  /// Creates the map (`capacity` entries) and links the programs to `runsDirectory` (a cgroup
  /// v2 directory). Throws when the kernel refuses (no `CAP_BPF`, no cgroup BPF, no BPF links
  /// before Linux 5.7).
  init(runsDirectory: String, capacity: UInt32 = defaultCapacity) throws(SystemCallError) {
    let map = try systemCall("bpf map create") { csystem_run_bytes_map_create(capacity) }
    var links: [Int32] = []
    do throws(SystemCallError) {
      for ingress in [false, true] {
        links.append(
          try CgroupProgram.link(to: runsDirectory, ingress: ingress) {
            csystem_run_bytes_program_load(map, ingress ? 1 : 0)
          })
      }
    } catch {
      for link in links { close(link) }
      close(map)
      throw error
    }
    self.map = map
    self.links = links
  }

  deinit {
    for link in links { close(link) }
    close(map)
  }

  /// The id of the cgroup v2 at `directory` (its inode number, what `bpf_skb_cgroup_id`
  /// gives), or nil when it cannot be read.
  static func cgroupID(_ directory: String) -> UInt64? {
    var status = stat()
    guard stat(directory, &status) == 0 else { return nil }
    return UInt64(status.st_ino)
  }

  func begin(_ cgroup: UInt64) {
    live.withLock { _ = $0.insert(cgroup) }
  }

  func counts(of cgroup: UInt64, ending: Bool) throws(SystemCallError) -> [Key: UInt64] {
    if ending { live.withLock { _ = $0.remove(cgroup) } }
    let entries = try read()
    var counts: [Key: UInt64] = [:]
    for (key, value) in entries where key.cgroup == cgroup {
      counts[
        Key(
          interfaceIndex: key.interface & ~CSYSTEM_RUN_BYTES_INGRESS,
          received: key.interface & CSYSTEM_RUN_BYTES_INGRESS != 0)] = value
    }
    if let lost = entries.first(where: { $0.key.cgroup == CSYSTEM_RUN_BYTES_UNCOUNTED }) {
      uncounted.withLock { $0 = lost.value }
    }
    if ending {
      let going = live.withLock { live in
        entries.filter {
          !live.contains($0.key.cgroup) && $0.key.cgroup != CSYSTEM_RUN_BYTES_UNCOUNTED
        }
      }
      for var (key, _) in going { _ = csystem_run_bytes_delete(map, &key) }
    }
    return counts
  }

  var uncountedBytes: UInt64 { uncounted.withLock { $0 } }

  /// Every entry of the map.
  private func read() throws(SystemCallError) -> [(key: csystem_run_bytes_key, value: UInt64)] {
    var capacity = 256
    while true {
      var keys = [csystem_run_bytes_key](repeating: csystem_run_bytes_key(), count: capacity)
      var values = [UInt64](repeating: 0, count: capacity)
      let count = try systemCall("bpf map read") {
        csystem_run_bytes_read(map, &keys, &values, Int32(capacity))
      }
      // A full buffer may have left entries out: read again into a larger one.
      guard Int(count) == capacity else {
        return (0..<Int(count)).map { (keys[$0], values[$0]) }
      }
      capacity *= 4
    }
  }
}

/// Turns the per-interface counts of a run, read from time to time, into its bytes split
/// metered or not: the bytes added on an interface between two readings are metered when that
/// interface was metered at the first of the two — the primary link or any other (a route to
/// one destination through a metered modem while Wi-Fi is primary). Loopback's bytes are left
/// out.
struct CgroupByteMeter: Sendable, Equatable {
  typealias Key = RunByteCounters.Key
  /// The interface index of loopback (left out).
  let loopback: UInt32
  private(set) var last: [Key: UInt64] = [:]
  /// The indexes of the interfaces that were metered at the last reading.
  private var meteredInterfaces: Set<UInt32>
  private(set) var bytes = RunNetworkBytes(accounting: .cgroup)

  init(loopback: UInt32, meteredInterfaces: Set<UInt32>) {
    self.loopback = loopback
    self.meteredInterfaces = meteredInterfaces
  }

  /// Takes a reading: the counts now, and the indexes of the interfaces metered now.
  mutating func advance(to counts: [Key: UInt64], meteredInterfaces next: Set<UInt32>) {
    for (key, count) in counts where key.interfaceIndex != loopback {
      let added = Int64(clamping: count &- min(count, last[key] ?? 0))
      let metered = meteredInterfaces.contains(key.interfaceIndex)
      if key.received {
        bytes.received += added
        if metered { bytes.meteredReceived += added }
      } else {
        bytes.sent += added
        if metered { bytes.meteredSent += added }
      }
      last[key] = count
    }
    meteredInterfaces = next
  }
}

/// ``ByteAccounting/cgroup`` for a run with a cgroup v2 of its own (``RunByteCounting``);
/// ``ByteAccounting/link`` (`fallback`) for a run that has none — the run's record says which
/// counted it, never one silently for the other.
struct CgroupByteAccounting: RunByteAccounting {
  let counters: any RunByteCounting
  var fallback = LinkCounterAccounting()
  /// The id of a run's cgroup (nil: it cannot be read; the run is counted by the link).
  var cgroupID: @Sendable (String) -> UInt64? = RunByteCounters.cgroupID
  /// Interface indexes by name (`if_nametoindex`; 0 when there is none).
  var interfaceIndex: @Sendable (String) -> UInt32 = { if_nametoindex($0) }
  /// The indexes of every link treated as metered now, primary or not (the daemon's
  /// reachability monitor: overrides, NetworkManager, ModemManager, kernel signals). Nil: the
  /// primary link only.
  var meteredLinks: (@Sendable () -> Set<UInt32>)? = nil

  var kind: ByteAccounting { .cgroup }

  func begin(under conditions: NetworkConditions) -> any RunByteSession {
    CgroupByteSession(accounting: self, conditions: conditions)
  }

  static let problemKind = HealthProblem.Kind(rawValue: "runBytesUncounted")

  var uncountedBytes: UInt64 { counters.uncountedBytes }

  /// Bytes that found the kernel's counters full went uncounted (a metered budget may then be
  /// crossed unseen).
  func problems() -> [HealthProblem] {
    let lost = uncountedBytes
    guard lost > 0 else { return [] }
    return [
      HealthProblem(kind: Self.problemKind, detectedAt: nil, message: Self.uncounted(lost))
    ]
  }

  /// What `status`, `doctor` and the journal say of `lost` uncounted bytes.
  static func uncounted(_ lost: UInt64) -> String {
    "\(lost) bytes of runs went uncounted since the daemon started: the kernel's run-bytes map "
      + "was full (too many runs and interfaces at once); metered budgets may be under-counted"
  }

  /// The indexes of the interfaces metered now: ``meteredLinks``, and the primary link when
  /// `conditions` say it is metered.
  func meteredInterfaces(_ conditions: NetworkConditions) -> Set<UInt32> {
    var indexes = meteredLinks?() ?? []
    if conditions.isReachable, conditions.isDataMetered, let link = conditions.primaryLink {
      let index = interfaceIndex(link)
      if index != 0 { indexes.insert(index) }
    }
    return indexes
  }
}

/// One run counted by ``CgroupByteAccounting``: by its cgroup's counts once
/// ``starting(inCgroup:)`` named one, else by the link's counters from then on.
final class CgroupByteSession: RunByteSession {
  private enum Counting {
    /// Not started yet (the conditions the run began under).
    case waiting(NetworkConditions)
    case cgroup(UInt64, CgroupByteMeter)
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
      if let id = cgroup.flatMap(accounting.cgroupID) {
        accounting.counters.begin(id)
        state = .cgroup(
          id,
          CgroupByteMeter(
            loopback: accounting.interfaceIndex("lo"),
            meteredInterfaces: accounting.meteredInterfaces(conditions)))
      } else {
        state = .link(accounting.fallback.begin(under: conditions))
      }
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
      case .cgroup(let id, var meter):
        // A failed read keeps what was counted before.
        if let counts = try? accounting.counters.counts(of: id, ending: finishing) {
          meter.advance(to: counts, meteredInterfaces: accounting.meteredInterfaces(conditions))
          state = .cgroup(id, meter)
        }
        return meter.bytes
      }
    }
  }
}
