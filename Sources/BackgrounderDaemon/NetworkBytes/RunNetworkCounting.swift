import Backgrounder
import Locking
import Logging
import SystemCalls

/// Counts the bytes of each command run (``RunByteAccounting``) and reports them: the store
/// and the metered budgets (``MeteredBudgetLedger``), the metric
/// `backgrounder_job_network_bytes_total` and one journal line per run. While a run whose
/// job has a metered budget (or the daemon has one) is on a metered link, its counters are
/// read once a second, so a run that crosses the budget is stopped; otherwise only at its start
/// and end.
struct RunNetworkCounting: Sendable {
  let accounting: any RunByteAccounting
  let ledger: MeteredBudgetLedger
  let metrics: MetricsFile?
  let logger: Logger
  let clock: any WallClock
  /// The network conditions now (the primary link, whether it is metered).
  let network: @Sendable () -> NetworkConditions
  /// The indexes of the links treated as metered now, primary or not: while any is, a sampled
  /// run's per-interface counts are read (its bytes may cross one of them while the primary
  /// link is not metered).
  var meteredLinks: @Sendable () -> Set<UInt32> = { [] }
  /// Told each run's bytes as soon as they are counted, before the run ends (the telemetry
  /// outbox's ``RunBytesFeed``).
  var counted: (@Sendable (TaskId, RunNetworkBytes) -> Void)? = nil
  /// When bytes that went uncounted were last told to the journal.
  let uncountedReport = UncountedBytesReport()

  /// Runs `body` (the command), counting its bytes from `conditions` on; hands the count to
  /// `store` (the run's ``WorkContext/recordNetworkBytes(_:)``: stored with its outcome).
  /// `body` calls the function it is given once the run's cgroup exists (nil: it has none),
  /// before the command starts (``RunByteSession/starting(inCgroup:)``).
  func counting<Result: Sendable>(
    taskId: TaskId, attempt: Int, under conditions: NetworkConditions,
    store: (RunNetworkRecord) -> Void,
    _ body: (_ starting: @escaping @Sendable (String?) -> Void) async -> Result
  ) async -> Result {
    let startedAt = clock.now
    let session = accounting.begin(under: conditions)
    let sampler: Task<Void, Never>? =
      ledger.samplesWhileMetered(taskId)
      ? Task { [network, ledger, meteredLinks, perInterface = accounting.kind == .cgroup] in
        while !Task.isCancelled {
          do { try await Task.sleep(for: .seconds(1)) } catch { return }
          let now = network()
          // (The link counters see the primary link only: another metered link changes nothing.)
          guard now.isDataMetered || (perInterface && !meteredLinks().isEmpty) else { continue }
          ledger.running(taskId, meteredBytes: session.read(under: now).meteredBytes)
        }
      } : nil
    let result = await body { session.starting(inCgroup: $0) }
    sampler?.cancel()
    let bytes = session.finish(under: network())
    let record = RunNetworkRecord(
      taskId: taskId, attempt: attempt, startedAt: startedAt, at: clock.now, bytes: bytes)
    counted?(taskId, bytes)
    store(record)
    ledger.finished(record)
    metrics?.recordNetworkBytes(
      job: taskId.rawValue, sent: bytes.sent, received: bytes.received,
      meteredSent: bytes.meteredSent, meteredReceived: bytes.meteredReceived)
    logger.info(
      "run network bytes",
      metadata: [
        "job": "\(taskId.rawValue)", "attempt": "\(attempt)", "bytes": "\(bytes.bytes)",
        "sent": "\(bytes.sent)", "received": "\(bytes.received)",
        "meteredBytes": "\(bytes.meteredBytes)", "accounting": "\(bytes.accounting.rawValue)",
      ])
    let uncounted = accounting.uncountedBytes
    if uncountedReport.due(total: uncounted, now: clock.now) {
      logger.warning(
        "\(CgroupByteAccounting.uncounted(uncounted))",
        metadata: ["job": "\(taskId.rawValue)", "uncountedBytes": "\(uncounted)"])
    }
    return result
  }
}

/// When the journal hears of runs' bytes that went uncounted (the kernel's counters full,
/// ``RunByteAccounting/uncountedBytes``): after the first run that finds some, then at most once
/// an hour while more go uncounted — beside the health problem `status` and `doctor` show, not
/// a line per run.
final class UncountedBytesReport: Sendable {
  static let interval = Duration.seconds(3600)
  private struct Told {
    var total: UInt64 = 0
    var at: WallInstant?
  }
  private let told = Lock(Told())

  /// Whether `total` bytes uncounted so far are to be told now (and, if so, counted as told).
  func due(total: UInt64, now: WallInstant) -> Bool {
    told.withLock { told in
      guard total > told.total else { return false }
      if let at = told.at, at.duration(to: now) < Self.interval { return false }
      told = Told(total: total, at: now)
      return true
    }
  }
}

/// How the daemon counts runs' bytes, and why: `status` and `doctor` show it (`"runBytes"` and
/// `"runBytesReason"` under `"daemon"`).
package struct RunBytesChoice: Sendable, Equatable, Codable {
  package var accounting: ByteAccounting
  /// In words, why this accounting (for `link`: why not the kernel's per-run counters).
  package var reason: String

  package init(accounting: ByteAccounting, reason: String) {
    self.accounting = accounting
    self.reason = reason
  }
}

extension RunNetworkCounting {
  /// How runs' bytes are counted under `containment`: each run's own, by the kernel
  /// (``CgroupByteAccounting``), when runs get their own cgroup and the daemon may link the
  /// counters' programs to their directory; else by the primary link's counters
  /// (``LinkCounterAccounting``). The choice and its reason are logged once, and returned for
  /// `status` and `doctor`.
  /// With the kernel's counters, bytes on any link in `meteredLinks` count as metered.
  static func accounting(
    for containment: RunContainment, meteredLinks: @escaping @Sendable () -> Set<UInt32>,
    logger: Logger
  ) -> (any RunByteAccounting, RunBytesChoice) {
    guard let cgroups = containment.cgroups else {
      let choice = RunBytesChoice(
        accounting: .link, reason: "runs have no cgroup v2 of their own")
      logger.info(
        "run bytes counted from the primary link's counters (approximate): \(choice.reason)")
      return (LinkCounterAccounting(), choice)
    }
    do throws(SystemCallError) {
      let counters = try RunByteCounters(runsDirectory: cgroups.runsDirectory)
      let choice = RunBytesChoice(
        accounting: .cgroup, reason: "cgroup_skb programs count each run cgroup's packets")
      logger.info("run bytes counted per run by the kernel (cgroup_skb on the run cgroups)")
      var accounting = CgroupByteAccounting(counters: counters)
      accounting.meteredLinks = meteredLinks
      return (accounting, choice)
    } catch {
      let choice = RunBytesChoice(
        accounting: .link, reason: "the kernel refused the counters' programs (\(error))")
      logger.info(
        "run bytes counted from the primary link's counters (approximate): the kernel refused the counters' programs",
        metadata: ["error": "\(error)"])
      return (LinkCounterAccounting(), choice)
    }
  }
}
