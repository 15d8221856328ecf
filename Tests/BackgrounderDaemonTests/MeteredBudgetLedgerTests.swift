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

  private func ledger(
    _ config: String, clock: ManualClock, logger: Logger = Logger(label: "test")
  ) throws -> (MeteredBudgetLedger, Published) {
    let published = Published()
    let ledger = MeteredBudgetLedger(
      clock: clock, zone: .utc, logger: logger,
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

  /// The daemon's budget is a health problem from 80 % used on, and the journal warns once as
  /// it crosses 80 % and once as it crosses 100 %.
  @Test func theSharedBudgetWarnsAt80And100Percent() throws {
    let clock = ManualClock()
    let (logger, logged) = LogCapture.make()
    let (ledger, _) = try ledger(
      "[network]\nmetered-budget = \"1MB/1d\"\n" + Self.jobs, clock: clock, logger: logger)
    // Spent, the ledger arms a release timer on the clock: ended with the test (LeakSanitizer
    // reported the task left asleep on the manual clock).
    defer { ledger.stop() }
    func warnings() -> [String] {
      logged.withLock { $0.filter { $0.hasPrefix("metered budget 1 MB/1d") } }
    }
    ledger.finished(try record("dev.example.free", at: clock.now, metered: 700_000))
    #expect(ledger.problems().isEmpty, "70 %")
    #expect(warnings().isEmpty)

    ledger.finished(try record("dev.example.free", at: clock.now, metered: 150_000))
    let problem = try #require(ledger.problems().first, "85 %")
    #expect(problem.kind == MeteredBudgetLedger.problemKind)
    #expect(problem.message == "metered budget 1 MB/1d: 850 KB used (85 %), 150 KB left")
    #expect(warnings() == [problem.message])
    ledger.finished(try record("dev.example.free", at: clock.now, metered: 50_000))
    #expect(warnings().count == 1, "once per level crossed")

    ledger.finished(try record("dev.example.free", at: clock.now, metered: 200_000))
    #expect(
      ledger.problems().first?.message
        == "metered budget 1 MB/1d: 1.1 MB used (110 %), 0 B left; jobs needing the network "
        + "wait for an unmetered link")
    #expect(warnings().count == 2)
    #expect(warnings().last == ledger.problems().first?.message)
  }
}
