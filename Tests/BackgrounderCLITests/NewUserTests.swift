import ArgumentParser
import Foundation
import PowerSource
import Testing

@testable import Backgrounder
@testable import BackgrounderCLI
@testable import BackgrounderDaemon

/// The command line as a new user meets it (issue 38): help that wraps at word boundaries,
/// `--config` on every verb, `--version`, and human lines without Swift debug descriptions.
@Suite struct NewUserTests {
  private static var verbs: [any ParsableCommand.Type] {
    BackgrounderCommand.configuration.subcommands
  }

  /// The arguments each verb needs besides `--config`.
  private static let requiredArguments: [String: [String]] = [
    "schedule": ["dev.example.a", "--once", "--command", "true"],
    "cancel": ["dev.example.a"], "trigger": ["dev.example.a"], "expire": ["dev.example.a"],
    "history": ["dev.example.a"], "logs": ["dev.example.a"], "capture": ["--output", "/tmp/x"],
    "calendar": ["daily"],
  ]

  /// A line of help at `columns` ends although the next line's first word would have fitted
  /// and the line ends no sentence: a hard line break inside a sentence. (The parser keeps a
  /// word on the line when line, blank and word are shorter than `columns`.)
  private static func breaksInsideSentences(_ help: String, columns: Int) -> [String] {
    let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var found: [String] = []
    for (line, next) in zip(lines, lines.dropFirst()) {
      let indent = line.prefix(while: { $0 == " " }).count
      let nextIndent = next.prefix(while: { $0 == " " }).count
      guard !line.trimmingCharacters(in: .whitespaces).isEmpty, indent == nextIndent,
        let firstWord = next.dropFirst(nextIndent).split(separator: " ").first,
        !firstWord.hasPrefix("-"), firstWord != "backgrounder"  // an example command line
      else { continue }
      if let last = line.last, ".:;!?".contains(last) { continue }
      if line.count + 1 + firstWord.count < columns { found.append("\(line) ⏎ \(next)") }
    }
    return found
  }

  @Test("help at 80 columns has no line break inside a sentence that fits", arguments: [80, 120])
  func helpWrapsAtWordBoundariesOnly(columns: Int) {
    var helps = [BackgrounderCommand.helpMessage(includeHidden: false, columns: columns)]
    for verb in Self.verbs {
      helps.append(
        BackgrounderCommand.helpMessage(for: verb, includeHidden: false, columns: columns))
    }
    for help in helps {
      #expect(Self.breaksInsideSentences(help, columns: columns) == [], "\(help)")
      // The usage line is the parser's own, never wrapped.
      for line in help.split(separator: "\n") where !line.hasPrefix("USAGE:") {
        #expect(line.count <= columns, "\(line)")
      }
    }
  }

  @Test("schedule --help lists each enum's values once")
  func enumHelpIsNotDoubled() {
    let help = BackgrounderCommand.helpMessage(
      for: ScheduleCommand.self, includeHidden: false, columns: 200)
    let network = help.split(separator: "\n").first { $0.contains("--network <") } ?? ""
    #expect(network.components(separatedBy: "unmetered").count == 2, "\(network)")
    let backoff = help.split(separator: "\n").first { $0.contains("--backoff <") } ?? ""
    #expect(backoff.components(separatedBy: "linear").count == 2, "\(backoff)")
  }

  @Test("every verb accepts --config")
  func everyVerbAcceptsConfig() throws {
    for verb in Self.verbs {
      let name = verb.configuration.commandName ?? "?"
      let arguments = [name] + (Self.requiredArguments[name] ?? []) + ["--config", "/tmp/c.toml"]
      // The option must be last for schedule (--command takes the rest): put it first there.
      let ordered =
        name == "schedule"
        ? [name, "--config", "/tmp/c.toml"] + (Self.requiredArguments[name] ?? []) : arguments
      #expect(throws: Never.self, "\(ordered)") {
        _ = try BackgrounderCommand.parseAsRoot(ordered)
      }
    }
  }

  @Test("unit writes the --config given into ExecStart, quoted for systemd")
  func unitWritesTheGivenConfig() throws {
    let command = try #require(
      try BackgrounderCommand.parseAsRoot(["unit", "--config", "/etc/my 100%.toml"])
        as? UnitCommand)
    #expect(command.config.config == "/etc/my 100%.toml")
    let unit = SystemdUnits.service(
      user: false, executable: "/usr/bin/backgrounder", configPath: command.config.config)
    #expect(
      unit.contains("\nExecStart=/usr/bin/backgrounder run --config \"/etc/my 100%%.toml\"\n"))
    let plain = SystemdUnits.service(
      user: true, executable: "/usr/bin/backgrounder", configPath: nil)
    #expect(
      plain.contains("ExecStart=/usr/bin/backgrounder run --config %E/backgrounder/config.toml"))
  }

  @Test("--version prints the version the daemon reports")
  func versionIsThePackageVersion() {
    do {
      _ = try BackgrounderCommand.parseAsRoot(["--version"])
      Issue.record("--version did not exit")
    } catch {
      #expect(BackgrounderCommand.message(for: error) == DaemonInfo.version)
    }
  }

  // MARK: Human lines

  @Test("status --watch words a finished run without Swift's debug form")
  func watchLineHasNoDebugDescription() throws {
    let event = MonitorEvent(
      taskId: try TaskId("dev.example.backup"), time: Date(),
      kind: .workCompleted(
        attempt: 0, result: .failure(reason: "exit status 1: Fatal: wrong password"),
        runtime: .nanoseconds(430_422_528)))
    let change = try #require(TaskChanges.change(for: event))
    #expect(
      change.detail == "attempt 0 after 0.43 s: failure: exit status 1: Fatal: wrong password")
    let retry = MonitorEvent(
      taskId: nil, time: Date(), kind: .retryScheduled(nextAttempt: 2, delay: .seconds(90)))
    #expect(TaskChanges.change(for: retry)?.detail == "retry: attempt 2 in 1 min 30 s")
  }

  private static let durationCases: [(Double, String)] = [
    (0.430422528, "0.43 s"), (1.25, "1.2 s"), (5, "5 s"), (42.4, "42 s"), (60, "1 min"),
    (252, "4 min 12 s"), (7500, "2 h 5 min"), (3 * 86_400 + 4 * 3600, "3 d 4 h"),
  ]

  @Test("durations read as people write them", arguments: durationCases)
  func durations(seconds: Double, text: String) {
    #expect(HumanText.duration(seconds: seconds) == text)
  }

  @Test("LAST RESULT is cut at a word boundary with …, whole with --wide")
  func lastResultCutsAtWords() throws {
    let reason =
      "network gate: unmetered network not available within 5 s (NetworkManager did not answer)"
    let task = TaskStatus(
      id: try TaskId("dev.example.a"), kind: .periodic, state: .backoff, nextRun: nil,
      attempt: 0, deferrals: 0, lastResult: .retry, lastReason: reason + "\nsecond line",
      pendingPredicates: [], ephemeral: false, lastRunStartedAt: nil, lastRunEndedAt: nil,
      recentRuns: [], serializedInput: Data(), interrupted: false)
    let cut = TaskStatusText.lastResult(task)
    #expect(cut == "retry: network gate: unmetered network not available within…")
    #expect(cut.count <= TaskStatusText.lastResultWidth)
    #expect(TaskStatusText.lastResult(task, wide: true) == "retry: \(reason) / second line")
    let table = TaskStatusText.report([task], storePath: "/s", now: Date(), wide: true)
    #expect(table.joined().contains("(NetworkManager did not answer) / second line"))
  }

  @Test("history shows start and end, or why a run never started")
  func historyShowsStartAndEnd() {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let finished = HistoryRun(
      RunRecord(
        attempt: 0, startedAt: start, endedAt: start.addingTimeInterval(0.43),
        outcome: "failure", reason: "exit status 1: Fatal: wrong password"))
    let startText = HumanText.time(start)
    #expect(finished.text.hasPrefix("\(startText) → "), "\(finished.text)")
    #expect(finished.text.contains("(0.43 s)  failure  attempt 0  exit status 1: Fatal"))
    #expect(!finished.text.contains("failure(reason:"))
    let held = HistoryRun(
      RunRecord(
        attempt: 0, startedAt: nil, endedAt: start, outcome: "blocked",
        reason: "/media/backup to be mounted"))
    #expect(
      held.text
        == "\(startText)  blocked  not started: held at the gate: /media/backup to be mounted "
        + "— no attempt used")
  }

  @Test("history shows a run's counted bytes as approximate; a run without has null keys")
  func historyShowsTheRunsBytes() throws {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    var record = RunRecord(
      attempt: 1, startedAt: start, endedAt: start.addingTimeInterval(2), outcome: "retry",
      reason: "exit status 75")
    let plain = HistoryRun(record)
    record.network = RunNetworkBytes(
      sent: 612_345, received: 3_100, meteredSent: 600_000, meteredReceived: 3_000,
      accounting: .link)
    let counted = HistoryRun(record)
    #expect(
      counted.text.contains(
        "\n    network: 612 KB sent, 3.1 KB received, 603 KB of it on metered links "
          + "(approximate: the primary link's counters; other traffic on the link counts too)"),
      "\(counted.text)")
    #expect(!plain.text.contains("network:"), "\(plain.text)")

    func object(_ run: HistoryRun) throws -> [String: Any] {
      try #require(
        try JSONSerialization.jsonObject(with: try JSONEncoder().encode(run)) as? [String: Any])
    }
    let json = try object(counted)
    #expect(json["bytes"] as? [String: Int64] == ["sent": 612_345, "received": 3_100])
    #expect(json["meteredBytes"] as? [String: Int64] == ["sent": 600_000, "received": 3_000])
    #expect(json["accounting"] as? String == "link")
    let none = try object(plain)
    for key in ["bytes", "meteredBytes", "accounting"] {
      #expect(none[key] is NSNull, "\(key) is present and null without a count")
    }
  }

  private static func power(external: Bool, charging: Bool, percent: Double?) -> PowerStatus {
    PowerStatus(
      externalPower: external, charging: charging, batteryPercent: percent, batteryLow: false,
      supplies: [])
  }

  private static let powerCases: [(PowerStatus, String)] = [
    (power(external: false, charging: true, percent: nil), "no battery (counts as on power)"),
    (power(external: true, charging: true, percent: nil), "on mains power (no battery)"),
    (power(external: true, charging: true, percent: 57), "on mains power, battery 57 %"),
    (power(external: false, charging: false, percent: 54), "on battery, 54 %, discharging"),
  ]

  @Test("power reads as what the user can act on", arguments: powerCases)
  func powerWording(status: PowerStatus, text: String) {
    #expect(powerSummary(status) == text)
    #expect(!powerSummary(status).contains("requiresCharging"))
  }

  private static let second: Int64 = 1_000_000
  private static let fromNowCases: [(Int64, String)] = [
    (0, "now"), (-1_500, "1ms ago"), (59 * second, "59s left"), (61 * second, "1min 1s left"),
    (299 * second, "4min 59s left"), (300 * second, "5min left"),
    (118 * 60 * second, "1h 58min left"), (6 * 3600 * second, "6h left"),
    (28 * 3600 * second, "1 day 4h left"), (2 * 86_400 * second, "2 days left"),
    (-8 * 86_400 * second, "1 week 1 day ago"),
    (-(2 * 31_557_600 + 8 * 2_629_800) * second, "2 years 8 months ago"),
  ]

  @Test("From now reads as systemd words it", arguments: fromNowCases)
  func fromNow(microseconds: Int64, text: String) {
    #expect(SystemdRelativeTime.text(microseconds: microseconds) == text)
  }

  @Test("logs without journald prints the run output the store keeps, oldest run first")
  func logsFallsBackToStoredOutput() throws {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let runs = [
      RunRecord(
        attempt: 1, startedAt: start.addingTimeInterval(60), endedAt: start.addingTimeInterval(61),
        outcome: "success", reason: nil, outputTail: "second\n"),
      RunRecord(attempt: 0, startedAt: nil, endedAt: start, outcome: "blocked", reason: "x"),
      RunRecord(
        attempt: 0, startedAt: start, endedAt: start.addingTimeInterval(1), outcome: "failure",
        reason: "exit status 1", outputTail: "first\nFatal: wrong password\n"),
    ]
    let task = TaskStatus(
      id: try TaskId("dev.example.backup"), kind: .periodic, state: .pending, nextRun: nil,
      attempt: 0, deferrals: 0, lastResult: .success, lastReason: nil, pendingPredicates: [],
      ephemeral: false, lastRunStartedAt: nil, lastRunEndedAt: nil, recentRuns: runs,
      serializedInput: Data(), interrupted: false)
    #expect(
      LogsCommand.storedOutput(of: task) == [
        "-- run of \(HumanText.time(start)), attempt 0: failure --",
        "first\nFatal: wrong password",
        "-- run of \(HumanText.time(start.addingTimeInterval(60))), attempt 1: success --",
        "second",
      ])
    var empty = task
    empty.recentRuns = [runs[1]]
    #expect(
      LogsCommand.storedOutput(of: empty) == ["no run of dev.example.backup has stored output"])
  }
}
