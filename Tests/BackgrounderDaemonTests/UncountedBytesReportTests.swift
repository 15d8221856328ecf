import Backgrounder
import BackgrounderTesting
import Locking
import Logging
import Testing

@testable import BackgrounderDaemon

/// Bytes that went uncounted (the kernel's run-bytes map full) reach the journal, not only
/// `status` and `doctor`: a warning after the first run that finds some, then at most once an
/// hour while more go uncounted.
@Suite struct UncountedBytesReportTests {
  /// Accounting whose uncounted total the test sets; each run's own count is empty.
  final class LosingAccounting: RunByteAccounting {
    let lost = Lock<UInt64>(0)
    var kind: ByteAccounting { .cgroup }
    var uncountedBytes: UInt64 { lost.withLock { $0 } }

    func begin(under conditions: NetworkConditions) -> any RunByteSession { Session() }

    struct Session: RunByteSession {
      func read(under conditions: NetworkConditions) -> RunNetworkBytes {
        RunNetworkBytes(accounting: .cgroup)
      }
      func finish(under conditions: NetworkConditions) -> RunNetworkBytes {
        RunNetworkBytes(accounting: .cgroup)
      }
    }
  }

  @Test("a warning at the first loss, none while nothing more is lost, then at most hourly")
  func lossesAreToldAtMostHourly() async throws {
    let clock = ManualClock()
    let (logger, lines) = LogCapture.make()
    let accounting = LosingAccounting()
    let counting = RunNetworkCounting(
      accounting: accounting,
      ledger: MeteredBudgetLedger(
        clock: clock, zone: .utc, logger: logger, standingsChanged: { _ in },
        storedBytes: { _ in [] }),
      metrics: nil, logger: logger, clock: clock,
      network: { NetworkConditions(isReachable: true, isDataMetered: false, primaryLink: "eth0") })
    let job = try TaskId("dev.example.upload")
    func run() async -> [String] {
      await counting.counting(
        taskId: job, attempt: 1, under: counting.network(), store: { _ in }, { _ in })
      return lines.withLock { $0.filter { $0.contains("went uncounted") } }
    }

    #expect(await run().isEmpty, "nothing lost, nothing told")
    accounting.lost.withLock { $0 = 1_500 }
    #expect(await run() == [CgroupByteAccounting.uncounted(1_500)])
    #expect(await run().count == 1, "no more lost: not told again")
    accounting.lost.withLock { $0 = 4_000 }
    clock.advance(by: .seconds(60))
    #expect(await run().count == 1, "more lost within the hour: held back")
    clock.advance(by: .seconds(3600))
    #expect(await run().last == CgroupByteAccounting.uncounted(4_000), "then told, with the total")
  }
}
