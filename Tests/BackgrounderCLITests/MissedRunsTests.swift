import BackgrounderDaemon
import Foundation
import Testing

@testable import Backgrounder
@testable import BackgrounderCLI

/// `status --watch` after a daemon restart prints the runs the store recorded while no
/// task-change stream was connected (issue #34): those ended after the task's last run known
/// when the daemon stopped and before the new stream connected (later ones arrive on it).
@Suite struct MissedRunsTests {
  private let stop = Date(timeIntervalSince1970: 1_800_000_000)

  private func task(_ id: String, runs: [(attempt: Int, endedAt: Date, outcome: String)]) throws
    -> TaskStatus
  {
    TaskStatus(
      id: try TaskId(id), kind: .periodic, state: .pending, nextRun: nil, attempt: 0,
      deferrals: 0, lastResult: nil, lastReason: nil, pendingPredicates: [], ephemeral: false,
      lastRunStartedAt: nil, lastRunEndedAt: runs.map(\.endedAt).max(),
      recentRuns: runs.map {
        RunRecord(
          attempt: $0.attempt, startedAt: nil, endedAt: $0.endedAt, outcome: $0.outcome, reason: nil
        )
      }, serializedInput: Data())
  }

  @Test func runsBetweenTheStopAndTheNewStreamOnlyOldestFirst() throws {
    let known = [try task("dev.test.old", runs: [(0, stop.addingTimeInterval(-60), "success")])]
    let connected = stop.addingTimeInterval(10)
    let now = [
      try task(
        "dev.test.old",
        runs: [
          (0, stop.addingTimeInterval(-60), "success"), (1, stop.addingTimeInterval(4), "retry"),
          (2, connected.addingTimeInterval(1), "success"),
        ]),
      try task("dev.test.new", runs: [(0, stop.addingTimeInterval(2), "success")]),
    ]
    let missed = StatusCommand.missedRuns(known: known, now: now, until: connected)
    #expect(missed.map(\.task) == ["dev.test.new", "dev.test.old"])
    #expect(missed.map(\.change) == [.finished, .finished])
    #expect(missed[1].detail?.hasPrefix("attempt 1: retry") == true, "\(missed)")
    #expect(StatusCommand.missedRuns(known: nil, now: now, until: connected).isEmpty)
    #expect(StatusCommand.missedRuns(known: now, now: now, until: connected).isEmpty)
  }
}
