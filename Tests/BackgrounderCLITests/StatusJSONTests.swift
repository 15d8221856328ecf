import BackgrounderDaemon
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
      .wifiNetwork(allowed: ["Home*", "Office \"5G\""], current: "Pixel-Hotspot"),
      .wifiNetwork(allowed: ["Home*"], current: nil),
      .networkInterface(allowed: ["eth*", "enp*"], current: "wlan0"),
      .networkInterface(allowed: [], current: nil), .mounted(path: "/media/My Backup"),
      .reachable(destination: "nas.lan:445", failure: .refused),
      .reachable(destination: "[::1]:445", failure: nil),
      .waitingForWindow(opens: start.addingTimeInterval(7200.25)),
      .networkRequired(.notRoaming), .notRoaming(roamingUnknown: "ModemManager \"not\" running"),
      .notRoaming(roamingUnknown: nil),
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

  @Test("a running task shows the lock its run holds: JSON key inhibitor, its mode in words")
  func runningTaskShowsItsLock() throws {
    let inhibitors = InhibitorsInfo(
      availability: "available",
      locks: [
        .init(job: "dev.test.task-1", mode: "block", held: true),
        .init(job: "dev.test.task-3", mode: "delay", held: false),
      ])
    #expect(StatusPrinter.heldLocks(inhibitors) == ["dev.test.task-1": .block])
    #expect(StatusPrinter.heldLocks(nil).isEmpty)
    var tasks = try Self.sampleTasks()
    tasks[1].inhibitor = .block
    var json = JSONText()
    TaskListJSON.append(tasks, to: &json)
    let text = String(decoding: json.bytes, as: UTF8.self)
    #expect(text.contains(#""id":"dev.test.task-1","inhibitor":"block","kind""#), "\(text)")
    #expect(text.components(separatedBy: "\"inhibitor\"").count == 2, "one task holds a lock")
    let lines = TaskStatusText.report(tasks, storePath: "/s", now: Date())
    #expect(lines.contains { $0.contains("dev.test.task-1") && $0.contains("(block lock)") })
    #expect(lines.filter { $0.contains("lock)") }.count == 1, "\(lines)")
  }

  @Test("hostile text in a cell is escaped before the columns are measured: they stay aligned")
  func hostileCellsKeepTheColumnsAligned() throws {
    var tasks = try Self.sampleTasks()
    tasks[0].lastResult = .failure
    tasks[0].lastReason = "\u{1B}]52;c;aGk=\u{07}\u{1B}[2J\u{9B}31m\tboom\u{202E}"
    let lines = TaskStatusText.report(tasks, storePath: "/s", now: Date())
    let header = lines[1]
    let column = header.distance(
      from: header.startIndex, to: try #require(header.range(of: "WAITING FOR")).lowerBound)
    for line in lines.dropFirst(2) {
      #expect(line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }, "\(line)")
      let cell = line.index(line.startIndex, offsetBy: column)
      #expect(line[line.index(before: cell)] == " " && line[cell] != " ", "\(lines)")
    }
    #expect(lines[2].contains("\\x1b]52;c;aGk=\\x07\\x1b[2J\\x9b31m boom\\u{202E}"), "\(lines)")
  }

  @Test("the task list is the same bytes as JSONEncoder writes")
  func taskListMatchesEncoder() throws {
    var tasks = try Self.sampleTasks()
    tasks[1].inhibitor = .delay
    tasks[3].inhibitor = .block
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

  @Test(
    "the whole document (links, --watch form, plain, unreadable tasks) matches JSONEncoder")
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
    // The network section is written by `JSONLineWriter`: links with and without an SSID,
    // names and SSIDs that need escaping.
    let network = NetworkStatus(
      isReachable: true, isDataMetered: true, primary: "wlan0",
      links: [
        LinkStatus(
          name: "lo", index: 1, type: .loopback, isUp: true, hasCarrier: true, isMetered: false,
          hasDefaultRoute: false, meteredReason: .loopback),
        LinkStatus(
          name: "wlan\"0\u{1}", index: 3, type: .wifi, isUp: true, hasCarrier: true,
          isMetered: true, hasDefaultRoute: true,
          meteredReason: .ssidOverride(pattern: "Pixel-*", ssid: "Pixel \"7\""),
          ssid: "Pixel \"7\" \\ é/"),
        {
          var modem = LinkStatus(
            name: "wwan0", index: 4, type: .cellular, isUp: true, hasCarrier: true,
            isMetered: true, hasDefaultRoute: false, meteredReason: .modemManagerRoaming)
          modem.isRoaming = true
          modem.isStale = true
          return modem
        }(),
      ],
      malformedMessages: 2, connectivity: .portal, connectivitySource: .networkManager)
    for (observedAt, network, tasks) in [
      ("2026-11-23T09:22:57.123456Z", network, try Self.sampleTasks()), (nil, .unknown, []),
      (nil, network, nil),
    ] as [(String?, NetworkStatus, [TaskStatus]?)] {
      let document = StatusDocument(
        observedAt: observedAt, network: network, power: power, tasks: tasks, health: health,
        daemon: daemon)
      #expect(try document.json() == (try Output.json(document)))
    }
  }

  @Test("daemon, health and power: the bytes JSONEncoder writes, every optional both ways")
  func sectionsMatchEncoder() throws {
    var answered = DaemonSection.Report(
      running: true, pid: 4_194_304, since: "2026-11-23T09:00:00Z", version: "1.2.3",
      storeError: "disk \"full\"\n")
    answered.inhibitors = InhibitorsInfo(
      availability: "available", locks: [.init(job: "dev.test.a", mode: "block", held: true)])
    answered.wakeAlarms = "unavailable"
    answered.wakeAlarmsReason = "no CAP_WAKE_ALARM"
    answered.runBytes = "cgroup"
    answered.runBytesReason = "BPF \u{1}"
    answered.view = DaemonView(
      network: .unknown,
      power: PowerStatus(
        externalPower: false, charging: false, batteryPercent: 57.900000000000006,
        batteryLow: false, supplies: []))
    let reports = [
      DaemonSection.Report(running: false),
      DaemonSection.Report(running: false, error: "connect /run/x.sock: Permission denied"),
      DaemonSection.Report(running: true), answered,
    ]
    for report in reports {
      var json = JSONText()
      try StatusSectionsJSON.append(report, to: &json)
      #expect(String(decoding: json.bytes, as: UTF8.self) == (try Output.json(report)))
    }
    let task = try TaskId("dev.test.stuck")
    let healths = [
      HealthReport(problems: [], daemonAnswered: false),
      HealthReport(
        problems: [
          HealthProblem(kind: .taskStuck, taskId: task, detectedAt: Self.start, message: "é\t"),
          HealthProblem(kind: .clockJump, detectedAt: nil, message: ""),
        ], daemonAnswered: true),
    ]
    for health in healths {
      var json = JSONText()
      StatusSectionsJSON.append(health, to: &json)
      #expect(String(decoding: json.bytes, as: UTF8.self) == (try Output.json(health)))
    }
    let supplies = [
      PowerSupplyStatus(
        name: "BAT0", type: "Battery", online: nil, status: "Not charging", capacity: 100,
        scope: "System"),
      PowerSupplyStatus(
        name: "hid-\"mouse\"", type: nil, online: 2, status: nil, capacity: nil, scope: nil),
    ]
    let percents: [Double?] = [nil, 0, 0.1, 20, 33.3, 42.5, 57.900000000000006, 99.95, 100]
    for (index, percent) in percents.enumerated() {
      let power = PowerStatus(
        externalPower: index.isMultiple(of: 2), charging: index.isMultiple(of: 3),
        batteryPercent: percent, batteryLow: index == 1,
        supplies: Array(supplies.prefix(index % 3)))
      var json = JSONText()
      StatusSectionsJSON.append(power, to: &json)
      #expect(String(decoding: json.bytes, as: UTF8.self) == (try Output.json(power)))
    }
  }

  @Test("the daemon's metered budget: a top-level object and a line, whether spent or not")
  func meteredBudgetShown() throws {
    let zone = CalendarTimeZone.utc
    let now = WallInstant(nanosecondsSince1970: 1_795_000_000_000_000_000)
    let budget = MeteredBudget(bytes: 10_000_000, window: .trailing(seconds: 30 * 86_400))
    let standing = budget.standing(
      of: [MeteredUsageRecord(at: now.advanced(by: .seconds(-3600)), bytes: 1_234_000)], at: now,
      zone: zone)
    var daemon = DaemonSection.Report(
      running: true, pid: 42, since: "2026-11-23T09:00:00Z", version: "1.0", storeError: nil)
    daemon.meteredBudget = MeteredBudgetReport(standing, resetsAt: nil)
    let document = StatusDocument(
      observedAt: nil, network: .unknown,
      power: PowerStatus(
        externalPower: true, charging: true, batteryPercent: nil, batteryLow: false, supplies: []),
      tasks: [], health: HealthReport(problems: [], daemonAnswered: true), daemon: daemon)
    let json = try document.json()
    #expect(json == (try Output.json(document)))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let shown = try #require(object["meteredBudget"] as? [String: Any], "\(json)")
    #expect(shown["used"] as? Int64 == 1_234_000)
    #expect(shown["budget"] as? Int64 == 10_000_000)
    #expect(shown["left"] as? Int64 == 8_766_000)
    #expect(shown["window"] as? String == "30d")
    #expect(shown["spent"] as? Bool == false)
    #expect(shown["freesAt"] as? String == "2026-12-18T10:06:40.000Z")
    #expect((object["daemon"] as? [String: Any])?["meteredBudget"] == nil, "top level only")
    let line = try #require(daemon.meteredBudget).line { _ in "09:26" }
    #expect(
      line
        == "Metered budget (all jobs): 1.2 MB of 10 MB/30d used (12 %), 8.8 MB left; "
        + "1.2 MB frees at 09:26")

    // A monthly window says when it resets, used or not; a spent one says so.
    let monthly = MeteredBudget(bytes: 1_000_000, window: .monthly(day: 1))
    let (_, end) = monthly.window(at: now, zone: zone)
    let spent = MeteredBudgetReport(
      monthly.standing(of: [MeteredUsageRecord(at: now, bytes: 1_500_000)], at: now, zone: zone),
      resetsAt: end)
    #expect(spent.resetsAt == "2026-12-01T00:00:00.000Z" && spent.freesAt == nil)
    #expect(
      spent.line { _ in "12-01 00:00" }
        == "Metered budget (all jobs): 1.5 MB of 1 MB/month (resets on day 1) used (150 %), "
        + "0 B left; spent: jobs needing the network wait for an unmetered link; "
        + "resets at 12-01 00:00")
    // Without a budget there is no key.
    daemon.meteredBudget = nil
    let plain = StatusDocument(
      observedAt: nil, network: .unknown, power: document.power, tasks: [],
      health: document.health, daemon: daemon)
    #expect(!(try plain.json()).contains("meteredBudget"))
  }
}
