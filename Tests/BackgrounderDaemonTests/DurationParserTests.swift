import BackgrounderDaemon
import Testing

@Suite struct DurationParserTests {
  @Test(arguments: [
    ("30s", Duration.seconds(30)), ("10m", .seconds(600)), ("4h", .seconds(14_400)),
    ("1d", .seconds(86_400)), ("1h30m", .seconds(5_400)), ("500ms", .milliseconds(500)),
    ("1.5h", .seconds(5_400)), (" 2m ", .seconds(120)),
    ("1d2h3m4s500ms", .milliseconds(93_784_500)), ("01m", .seconds(60)), ("0s", .zero),
    ("3153600000000ms", .seconds(3_153_600_000)), ("2h0.5h", .seconds(9_000)),
  ])
  func parsesUnits(text: String, expected: Duration) throws {
    #expect(try DurationParser.parse(text) == expected)
  }

  @Test(arguments: [
    "", "10", "4x", "h", "1h 30m", "-5s", "1e3s", "s10", "1H", "1h30", "1hh", "٣s", "5µs",
    "5s\u{301}",
    "1_000s", "1.s.", "..5s",
  ])
  func rejectsMalformed(text: String) {
    #expect(throws: DurationParser.InvalidDuration(text: text)) {
      try DurationParser.parse(text)
    }
  }

  @Test(arguments: ["30s", "10m", "4h", "1d", "1h30m", "500ms", "1d2h3m4s"])
  func formatRoundTrips(text: String) throws {
    #expect(DurationParser.format(try DurationParser.parse(text)) == text)
  }

  @Test(arguments: ["999999999999d", "36501d", "99999999999999999999999999999h"])
  func rejectsTooLarge(text: String) {
    let error = #expect(throws: DurationParser.InvalidDuration.self) {
      try DurationParser.parse(text)
    }
    #expect(error?.isTooLarge == true)
    #expect(error?.description.contains("is too large: the maximum is 36500d") == true)
  }

  @Test func acceptsTheMaximum() throws {
    #expect(try DurationParser.parse("36500d") == DurationParser.maximum)
  }
}
