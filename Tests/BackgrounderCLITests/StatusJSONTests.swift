import Foundation
import PowerSource
import Reachability
import Testing

@testable import Backgrounder
@testable import BackgrounderCLI

/// `status --json` writes its task list directly instead of through `JSONEncoder`; scripts
/// read that output, so it must stay byte for byte what `JSONEncoder` wrote before.
@Suite("status --json encoding")
struct StatusJSONTests {
  private static let start = Date(timeIntervalSince1970: 1_795_000_000.123_456_789)

  /// Every optional both present and absent, every predicate, every state, odd strings.
  private static func sampleTasks() throws -> [TaskStatus] {
    let predicates: [PendingPredicate] = [
      .networkRequired(.unmetered), .workingInternet(.portal), .requiresCharging,
      .requiresBatteryNotLow, .waitingForBackoff(until: start.addingTimeInterval(61.5)),
      .waitingForEarliestBeginDate(at: start.addingTimeInterval(86_400)),
      .workerNotRegistered,
    ]
    let runs = [
      RunRecord(
        attempt: 2, startedAt: start, endedAt: start.addingTimeInterval(0.25), outcome: "retry",
        reason: "exit status 75: \"try again\" \\ later/soon\n\ttab"),
      RunRecord(
        attempt: 0, startedAt: nil, endedAt: start, outcome: "deferred", reason: nil),
    ]
    let states: [TaskState] = [.pending, .running, .backoff, .blocked, .succeeded, .failed]
    var tasks: [TaskStatus] = []
    for (index, state) in states.enumerated() {
      let full = index.isMultiple(of: 2)
      tasks.append(
        TaskStatus(
          id: try TaskId("dev.test.task-\(index)"), kind: full ? .periodic : .oneTime,
          state: state, nextRun: full ? start.addingTimeInterval(Double(index)) : nil,
          attempt: index, deferrals: 3 * index, lastResult: full ? .failure : nil,
          lastReason: full ? "é ☃ 🚀 \u{0}\u{1}\u{8}\u{b}\u{c}\u{1f}\u{7f} </script>" : nil,
          pendingPredicates: full ? predicates : [], ephemeral: !full,
          lastRunStartedAt: full ? start : nil,
          lastRunEndedAt: full ? start.addingTimeInterval(1) : nil,
          recentRuns: full ? runs : [], serializedInput: Data(), interrupted: state == .running))
    }
    return tasks
  }

  @Test("the task list is the same bytes as JSONEncoder writes")
  func taskListMatchesEncoder() throws {
    let tasks = try Self.sampleTasks()
    for list in [tasks, [], nil] as [[TaskStatus]?] {
      var json = JSONText()
      TaskListJSON.append(list, to: &json)
      #expect(String(decoding: json.bytes, as: UTF8.self) == (try Output.json(list)))
    }
  }

  @Test("every ASCII character and some non-ASCII text are escaped as JSONEncoder escapes them")
  func stringsEscapeAsEncoder() throws {
    let ascii = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
    for text in [ascii, "", "ünïcödé \u{2028}\u{2029} 𝄞", "a/b\\c\"d"] {
      var json = JSONText()
      json.string(text)
      #expect(String(decoding: json.bytes, as: UTF8.self) == (try Output.json(text)))
    }
  }

  @Test("the whole document, in --watch form, plain and with unreadable tasks, matches JSONEncoder")
  func documentMatchesEncoder() throws {
    let power = PowerStatus(
      externalPower: false, charging: false, batteryPercent: 42.5, batteryLow: false,
      supplies: [
        PowerSupplyStatus(
          name: "BAT0", type: "Battery", online: nil, status: "Discharging", capacity: 42,
          scope: nil)
      ])
    let health = HealthReport(
      problems: [
        HealthProblem(kind: .storeError, detectedAt: Self.start, message: "disk \"full\"")
      ], daemonAnswered: true)
    let daemon = DaemonSection.Report(
      running: true, pid: 42, since: "2026-11-23T09:00:00Z", version: "1.0", storeError: nil)
    for (observedAt, tasks) in [
      ("2026-11-23T09:22:57.123456Z", try Self.sampleTasks()), (nil, []), (nil, nil),
    ] as [(String?, [TaskStatus]?)] {
      let document = StatusDocument(
        observedAt: observedAt, network: .unknown, power: power, tasks: tasks, health: health,
        daemon: daemon)
      #expect(try document.json() == (try Output.json(document)))
    }
  }
}
