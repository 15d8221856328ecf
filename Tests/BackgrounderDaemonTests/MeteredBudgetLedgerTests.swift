import Backgrounder
import BackgrounderTesting
import Locking
import Logging
import Testing

@testable import BackgrounderDaemon

/// The ledger hands the runtime new standings only when a budget counts the bytes of the run
/// that ended (each hand-over is a step of the dispatch state machine and a wake-up of its
/// loop), and holds a job's ended runs no longer than a budget can count them.
@Suite struct MeteredBudgetLedgerTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  /// The standings handed over, in order.
  private final class Published: Sendable {
    let list = Lock<[MeteredBudgetStandings]>([])
    var count: Int { list.withLock { $0.count } }
    var last: MeteredBudgetStandings? { list.withLock { $0.last } }
  }

  private func ledger(_ config: String, clock: ManualClock) throws -> (
    MeteredBudgetLedger, Published
  ) {
    let published = Published()
    let ledger = MeteredBudgetLedger(
      clock: clock, zone: .utc, logger: Logger(label: "test"),
      standingsChanged: { standings in published.list.withLock { $0.append(standings) } },
      storedBytes: { _ in [] })
    ledger.configure(
      try ConfigurationLoader.parse(config, path: "test.toml", locations: locations))
    return (ledger, published)
  }

  private func record(_ job: String, at instant: WallInstant, metered: Int64) throws
    -> RunNetworkRecord
  {
    RunNetworkRecord(
      taskId: try TaskId(job), attempt: 1, startedAt: instant, at: instant,
      bytes: RunNetworkBytes(
        sent: metered, received: 0, meteredSent: metered, accounting: .link))
  }

  private static let jobs = """
    [[job]]
    id = "dev.example.budgeted"
    command = ["/bin/true"]
    every = "1h"
    network = "unmetered"
    metered-budget = "10MB/1d"
    [[job]]
    id = "dev.example.free"
    command = ["/bin/true"]
    every = "1h"
    """

  @Test func aRunNoBudgetCountsPublishesNothing() throws {
    let clock = ManualClock()
    let (ledger, published) = try ledger(Self.jobs, clock: clock)
    ledger.finished(try record("dev.example.free", at: clock.now, metered: 5_000))
    ledger.running(try TaskId("dev.example.free"), meteredBytes: 7_000)
    #expect(published.count == 0)
    ledger.finished(try record("dev.example.budgeted", at: clock.now, metered: 2_000_000))
    let last = try #require(published.last)
    #expect(last.tasks[try TaskId("dev.example.budgeted")]?.used == 2_000_000)
  }

  @Test func aSharedBudgetCountsEveryJob() throws {
    let clock = ManualClock()
    let (ledger, published) = try ledger(
      "[network]\nmetered-budget = \"1GB/1d\"\n" + Self.jobs, clock: clock)
    ledger.finished(try record("dev.example.free", at: clock.now, metered: 5_000))
    #expect(published.last?.daemon?.used == 5_000)
  }

  @Test func recordsOlderThanAnyWindowAreDropped() throws {
    let clock = ManualClock()
    let (ledger, _) = try ledger(Self.jobs, clock: clock)
    let id = try TaskId("dev.example.free")
    for _ in 0..<3 {
      ledger.finished(try record(id.rawValue, at: clock.now, metered: 1_000))
      clock.advance(by: .seconds(3_600))
    }
    #expect(ledger.heldRecords(of: id) == 3)
    // A year and two days on: the three can count in no window; only the new one is held.
    clock.advance(by: .seconds(MeteredBudget.longestTrailingSeconds + 2 * 86_400))
    ledger.finished(try record(id.rawValue, at: clock.now, metered: 1_000))
    #expect(ledger.heldRecords(of: id) == 1)
  }
}
