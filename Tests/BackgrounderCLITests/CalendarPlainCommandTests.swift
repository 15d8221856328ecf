import ArgumentParser
import Testing

@testable import BackgrounderCLI

/// ``CalendarCommand/plainRequest(_:)`` reads the plain `calendar` lines exactly as the argument
/// parser reads them (it is what makes 10,000 expressions linear), and leaves every other line
/// to it.
@Suite struct CalendarPlainCommandTests {
  @Test(
    "plain lines give what CalendarCommand's parser gives",
    arguments: [
      ["daily"],
      ["daily", "weekly", "Mon..Fri *-*-* 02:00"],
      ["--json", "*-*-* 03:00 UTC"],
      ["hourly", "--iterations", "3", "daily"],
      ["--base-time", "@1700000000", "daily", "--json"],
      ["--config", "/etc/bg.toml", "daily"],
      ["", "daily"],
    ])
  func plainLinesMatchTheParser(arguments: [String]) throws {
    let plain = try #require(CalendarCommand.plainRequest(arguments[...]))
    let parsed = try #require(try CalendarCommand.parseAsRoot(arguments) as? CalendarCommand)
    #expect(plain == parsed.request)
  }

  @Test("many expressions are read in order")
  func manyExpressions() throws {
    let expressions = (0..<10_000).map { "*-*-* \($0 % 24):\($0 % 60)" }
    let plain = try #require(CalendarCommand.plainRequest(expressions[...]))
    #expect(plain.expressions == expressions)
  }

  @Test(
    "anything else is left to the parser",
    arguments: [
      [],
      ["--help"],
      ["-h"],
      ["--json", "--json", "daily"],
      ["daily", "--iterations"],
      ["daily", "--iterations", "0"],
      ["daily", "--iterations", "x"],
      ["daily", "--iterations", "2", "--iterations", "3"],
      ["daily", "--iterations=2"],
      ["daily", "--base-time", "-1"],
      ["-", "daily"],
      ["--", "daily"],
      ["daily", "--verbose"],
      ["--generate-completion-script", "bash"],
    ])
  func otherLinesAreNotReadHere(arguments: [String]) {
    #expect(CalendarCommand.plainRequest(arguments[...]) == nil)
  }
}
