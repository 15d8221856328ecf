import Backgrounder
import Foundation
import TOML
import Testing

@testable import BackgrounderDaemon

/// The calendar keys of a `[[job]]`: read in full, and each mistake reported with the file,
/// line, key and offending part.
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

  @Test func validCalendarJobIsRefusedUntilTheDispatcherRunsIt() throws {
    let problem = try #require(error("window = \"22:00-06:00\"\nevery = \"1d\""))
    #expect(problem.key == "job[0].window")
    #expect(problem.message.contains("not yet run"))
  }
}
