import Backgrounder
import Foundation
import TOML
import Testing

@testable import BackgrounderDaemon

/// The calendar keys of a `[[job]]`: read in full, each mistake reported with the file, line,
/// key and offending part, and mapped to the runtime's calendar request and window constraint.
@Suite struct CalendarConfigurationTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func error(_ jobKeys: String) -> ConfigurationError? {
    let text = """
      [[job]]
      id = "dev.example.backup"
      command = ["restic", "backup"]
      \(jobKeys)
      """
    do {
      _ = try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations)
      return nil
    } catch {
      return error
    }
  }

  private func settings(_ jobKeys: String) throws -> CalendarSettings? {
    let document = try TOMLTable(parsing: jobKeys)
    return try CalendarSettingsReader.read(TableReader(table: document, path: "", file: "t"))
  }

  @Test func readsEveryKey() throws {
    let settings = try #require(
      try settings(
        """
        calendar = ["Mon..Fri *-*-* 02:00", "Sat 04:30 Europe/Berlin"]
        window = ["22:00-06:00", "Sat,Sun 08:00-20:00"]
        window-end = "stop"
        random-delay = "30m"
        fixed-random-delay = true
        catch-up = false
        """))
    #expect(
      settings.calendars.map(\.normalized) == [
        "Mon..Fri *-*-* 02:00:00", "Sat *-*-* 04:30:00 Europe/Berlin",
      ])
    #expect(settings.windows.map(\.description) == ["22:00-06:00", "Sat,Sun 08:00-20:00"])
    #expect(settings.windowEnd == .stop)
    #expect(settings.randomDelay == .seconds(1800))
    #expect(settings.fixedRandomDelay)
    #expect(!settings.catchUp)
    let defaults = try #require(try self.settings("calendar = \"daily\""))
    #expect(defaults.catchUp && !defaults.fixedRandomDelay && defaults.windowEnd == .continue)
    #expect(try self.settings("every = \"1h\"") == nil)
  }

  @Test func invalidExpressionNamesFileLineKeyAndPart() throws {
    let problem = try #require(error("calendar = \"Mon..Funday 02:00\""))
    #expect(problem.file == "jobs.toml")
    #expect(problem.line == 4)
    #expect(problem.key == "job[0].calendar")
    #expect(problem.message.contains("Mon..Funday 02:00") && problem.message.contains("Funday"))
  }

  @Test("a repetition of the seconds under 1s is refused in the config and in a request")
  func subSecondRepetitionIsRefused() throws {
    let problem = try #require(error("calendar = \"*-*-* *:*:00/0.000001\""))
    #expect(problem.key == "job[0].calendar")
    #expect(problem.line == 4)
    #expect(
      problem.message.contains("*-*-* *:*:00/0.000001") && problem.message.contains("0.000001s")
        && problem.message.contains("shorter than 1s"), "\(problem)")
    // A `schedule` request on the control socket is checked by the same rules.
    let request = JobDefinition(
      id: "dev.example.spin", command: ["/bin/true"], schedule: .calendar(["*:*:0/0.5"]))
    let (key, message) = try #require(JobValidation.problem(with: request))
    #expect(key == "calendar" && message.contains("0.5s") && message.contains("shorter than 1s"))
  }

  @Test func invalidListElementNamesItsIndexAndLine() throws {
    let problem = try #require(
      error(
        """
        calendar = [
          "daily",
          "*-13-01",
        ]
        """))
    #expect(problem.key == "job[0].calendar[1]")
    #expect(problem.line == 6)
    #expect(problem.message.contains("*-13-01") && problem.message.contains("month"))
  }

  @Test func invalidWindowsAndCombinations() throws {
    let cases: [(String, String, String)] = [
      ("calendar = \"daily\"\nwindow = \"25:00-06:00\"", "job[0].window", "25:00"),
      (
        "calendar = \"daily\"\nwindow = [\"22:00-06:00\", \"Funday 1:00-2:00\"]",
        "job[0].window[1]", "Funday"
      ),
      ("calendar = \"daily\"\nwindow = \"22:00-22:00\"", "job[0].window", "same time"),
      ("window = \"22:00-06:00\"\nwindow-end = \"pause\"", "job[0].window-end", "pause"),
      ("calendar = \"daily\"\nwindow-end = \"stop\"", "job[0].window-end", "window"),
      ("every = \"1h\"\nrandom-delay = \"5m\"", "job[0].random-delay", "calendar"),
      (
        "calendar = \"daily\"\nfixed-random-delay = true", "job[0].fixed-random-delay",
        "random-delay"
      ),
      ("calendar = \"daily\"\nrandom-delay = \"soon\"", "job[0].random-delay", "soon"),
      ("calendar = \"daily\"\nevery = \"1h\"", "job[0].every", "one schedule"),
      ("calendar = []", "job[0].calendar", "non-empty"),
      ("calendar = \"daily\"\ncatch-up = \"yes\"", "job[0].catch-up", "true or false"),
    ]
    for (keys, key, part) in cases {
      let problem = try #require(error(keys), "\(keys)")
      #expect(problem.key == key, "\(keys): \(problem)")
      #expect(problem.message.contains(part), "\(keys): \(problem)")
      #expect(problem.line != nil)
    }
  }

  private func job(_ jobKeys: String) throws -> JobDefinition {
    let text = """
      [[job]]
      id = "dev.example.backup"
      command = ["restic", "backup"]
      \(jobKeys)
      """
    return try #require(
      try ConfigurationLoader.parse(text, path: "jobs.toml", locations: locations).jobs.first)
  }

  @Test func calendarJobIsAcceptedAndMappedToACalendarRequest() throws {
    let job = try job(
      """
      calendar = ["Mon..Fri *-*-* 02:00", "Sat 04:30 Europe/Berlin"]
      window = "22:00-06:00"
      window-end = "stop"
      random-delay = "30m"
      catch-up = false
      """)
    #expect(
      job.schedule == .calendar(["Mon..Fri *-*-* 02:00:00", "Sat *-*-* 04:30:00 Europe/Berlin"]))
    guard case .periodic(let request) = try JobRequests.request(for: job, origin: .config) else {
      Issue.record("not a periodic request")
      return
    }
    let calendar = try #require(request.calendar)
    #expect(
      calendar.events.map(\.normalized) == [
        "Mon..Fri *-*-* 02:00:00", "Sat *-*-* 04:30:00 Europe/Berlin",
      ])
    #expect(calendar.randomDelay == .seconds(1800))
    #expect(!calendar.catchUp)
    #expect(request.constraints.windows.map(\.description) == ["22:00-06:00"])
    #expect(request.constraints.windowEnd == .stop)
  }

  @Test func windowsApplyToEveryAndOnceJobsToo() throws {
    for schedule in ["every = \"1d\"", "once = true"] {
      let job = try job("\(schedule)\nwindow = \"Sat,Sun 08:00-20:00\"")
      let request = try JobRequests.request(for: job, origin: .config)
      let constraints =
        switch request {
        case .oneTime(let oneTime): oneTime.constraints
        case .periodic(let periodic): periodic.constraints
        }
      #expect(constraints.windows.map(\.description) == ["Sat,Sun 08:00-20:00"], "\(schedule)")
    }
  }

  @Test func storedCalendarJobReadsBackUnchanged() throws {
    let job = try job(
      "calendar = \"daily\"\nwindow = \"22:00-06:00\"\nrandom-delay = \"5m\"\ncatch-up = false")
    let input = try StoredJob.input(for: job, origin: .config)
    #expect(StoredJob.decode(input)?.job == job)
  }

  @Test func fixedRandomDelayReadsTheMachineId() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "machine-id-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("machine-id").path
    let job = try job("calendar = \"daily\"\nrandom-delay = \"1h\"\nfixed-random-delay = true")

    // Missing: a clear error naming the key and the file, not a silent default.
    #expect {
      try JobRequests.request(for: job, origin: .config, machineIdPath: path)
    } throws: { error in
      let invalid = error as? InvalidJobDefinition
      return invalid?.key == "fixed-random-delay" && invalid?.message.contains(path) == true
    }
    try "not-a-machine-id\n".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(throws: InvalidJobDefinition.self) {
      try JobRequests.request(for: job, origin: .config, machineIdPath: path)
    }

    let machineId = "0123456789abcdef0123456789abcdef"
    try "\(machineId)\n".write(toFile: path, atomically: true, encoding: .utf8)
    guard
      case .periodic(let request) = try JobRequests.request(
        for: job, origin: .config, machineIdPath: path)
    else {
      Issue.record("not a periodic request")
      return
    }
    #expect(request.calendar?.splay == .fixed(machineId: machineId, jobId: "dev.example.backup"))
    // The same delay on every start of this machine.
    let elapse = WallInstant(nanosecondsSince1970: 1_700_000_000_000_000_000)
    let again = try JobRequests.request(for: job, origin: .config, machineIdPath: path)
    guard case .periodic(let second) = again else { return }
    #expect(request.calendar?.delay(for: elapse) == second.calendar?.delay(for: elapse))
  }

  @Test func doctorListsTheNextThreeElapses() throws {
    let job = try job("calendar = \"*-*-* 02:00 UTC\"")
    var doctor = Doctor(configPath: "/nonexistent", unitPaths: [])
    doctor.now = Date(timeIntervalSince1970: 1_700_000_000)  // Tue 2023-11-14 22:13:20 UTC
    let findings = doctor.checkCalendar(of: job)
    let local = CalendarTimeZones.local()
    let expected = [1_700_013_600, 1_700_100_000, 1_700_186_400].map { seconds in
      CalendarTimeFormat.human(
        WallInstant(nanosecondsSince1970: Int64(seconds) * 1_000_000_000), in: local)
    }
    #expect(findings.map(\.message) == ["next elapses: " + expected.joined(separator: ", ")])
    var missing = doctor
    missing.machineIdPath = "/nonexistent/machine-id"
    let fixed = try self.job(
      "calendar = \"daily\"\nrandom-delay = \"1h\"\nfixed-random-delay = true")
    #expect(missing.checkCalendar(of: fixed).map(\.severity) == [.problem])
  }
}
