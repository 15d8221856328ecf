import Foundation
import Testing

@testable import Backgrounder

@Suite("Calendar events")
struct CalendarEventTests {
  private static let berlin = CalendarTimeZone(identifier: "Europe/Berlin")!

  private static func elapses(
    _ expression: String, after seconds: Int64, count: Int = 3, zone: CalendarTimeZone = berlin
  ) throws -> [String] {
    let event = try CalendarEvent(expression)
    return event.elapses(
      after: WallInstant(nanosecondsSince1970: seconds * 1_000_000_000), count: count,
      localZone: zone
    ).map { CalendarTimeFormat.iso8601($0, in: event.timeZone(localZone: zone)) }
  }

  @Test("normalized forms as systemd writes them")
  func normalizedForms() throws {
    let cases = [
      "Mon-Wed *-*-* 1:2:3.25": "Mon..Wed *-*-* 01:02:03.250000",
      "weekly": "Mon *-*-* 00:00:00",
      "quarterly": "*-01,04,07,10-01 00:00:00",
      "*-*~1..3/2": "*-*~01..03/2 00:00:00",
      "00:00:1.5..10/2.25": "*-*-* 00:00:01.500000..08.250000/2.250000",
      "12:00 utc": "*-*-* 12:00:00 UTC",
      "Sat,Sun,Mon 8..20/4:00 Europe/Berlin": "Mon,Sat,Sun *-*-* 08..20/4:00:00 Europe/Berlin",
      "@1234567890": "2009-02-13 23:31:30 UTC",
      "*:19..49/1,17..49": "*-*-* *:17..49,19..49:00",
    ]
    for (expression, normalized) in cases {
      #expect(try CalendarEvent(expression).normalized == normalized, "\(expression)")
    }
  }

  @Test("an invalid expression's error names the offending part")
  func errorsNameTheOffendingPart() {
    let cases = [
      "Mon..Funday 12:00": "Funday", "*-13-01": "month", "*:*:60": "second",
      "12:00 Nowhere/City": "Nowhere/City", "*-*-* 24:00": "hour", "Sat..Mon": "Mon",
    ]
    for (expression, part) in cases {
      #expect {
        try CalendarEvent(expression)
      } throws: { error in
        "\(error)".contains(part) && "\(error)".contains(expression)
      }
    }
  }

  @Test("a 02:30 that does not exist is skipped; one that happens twice runs once")
  func daylightSavingTransitions() throws {
    // 2024-03-31: Berlin jumps 02:00 → 03:00; 2024-10-27: 03:00 → 02:00.
    #expect(
      try Self.elapses("*-*-* 02:30", after: 1_711_800_000, count: 2) == [
        "2024-04-01T02:30:00+02:00", "2024-04-02T02:30:00+02:00",
      ])
    #expect(
      try Self.elapses("*-*-* 02:30", after: 1_729_900_000, count: 3) == [
        "2024-10-26T02:30:00+02:00", "2024-10-27T02:30:00+02:00", "2024-10-28T02:30:00+01:00",
      ])
    // Hourly over the fall-back: the repeated 02:30 (+01:00) is not run again.
    #expect(
      try Self.elapses("*:30", after: 1_729_985_400, count: 2) == [
        "2024-10-27T02:30:00+02:00", "2024-10-27T03:30:00+01:00",
      ])
  }

  /// systemd 252 gives up on `12/7` (12:04 and 19:04) after 19:04 the day before Berlin's
  /// clocks go forward ("infinite loop in calendar calculation"), and its timer never elapses
  /// again; the search starts again later, and the job keeps its elapses.
  @Test("an elapse systemd's search gives up on before a clock change is found after it")
  func searchGivenUpBeforeAClockChange() throws {
    let event = try CalendarEvent("*-*-* 12/7:04:00")
    let after = WallInstant(nanosecondsSince1970: 1_774_721_040 * 1_000_000_000)  // 03-28 19:04
    #expect(event.next(after: after, localZone: Self.berlin) == .unresolved)  // as systemd
    #expect(
      try Self.elapses("*-*-* 12/7:04:00", after: 1_774_721_040) == [
        "2026-03-29T12:04:00+02:00", "2026-03-29T19:04:00+02:00", "2026-03-30T12:04:00+02:00",
      ])
    let schedule = CalendarSchedule(events: [event], localZone: Self.berlin)
    let due = schedule.due(lastElapse: after, now: after)
    let elapse = WallInstant(nanosecondsSince1970: 1_774_778_640_000_000_000)  // 03-29 10:04Z
    #expect(due?.elapse == elapse, "\(String(describing: due))")
  }

  /// systemd 252 gives up on a month repetition (`06/5`: June and November) searched from after
  /// its last month of the year: from the last elapse in November on, its timer never elapses
  /// again. The search starts again at the next year's first month, one restart, not a walk of
  /// every quarter hour (which ran out after two days and dropped the job).
  @Test("a month repetition systemd's search gives up on after its last month goes on next year")
  func monthRepetitionPastTheYearsLastMatch() throws {
    let event = try CalendarEvent("*-06/5-* 04:00:00")
    let afterLast = Self.instant(1_922_263_200)  // 2030-11-30 10:00Z
    #expect(event.next(after: afterLast, localZone: Self.berlin) == .unresolved)  // as systemd
    #expect(
      try Self.elapses("*-06/5-* 04:00:00", after: 1_922_263_200) == [
        "2031-06-01T04:00:00+02:00", "2031-06-02T04:00:00+02:00", "2031-06-03T04:00:00+02:00",
      ])
    // In December: one restart, one microsecond before New Year's midnight (local time).
    let december = Self.instant(1_922_706_300)  // 12-05
    let newYear = Self.instant(1_924_988_400)  // 00:00+01
    #expect(
      event.restart(after: december, localZone: Self.berlin)
        == newYear.advanced(by: .microseconds(-1)))
    // Days counted from the month's end (`~03`: 28 November, 28 June), which systemd also gives
    // up on; after the 28th, the next month's first.
    #expect(
      try Self.elapses("*-06/5~03 04:00", after: 1_919_757_600) == [
        "2030-11-28T04:00:00+01:00", "2031-06-28T04:00:00+02:00", "2031-11-28T04:00:00+01:00",
      ])
    let fromEnd = try CalendarEvent("*-06/5~03 04:00")
    #expect(
      fromEnd.restart(after: Self.instant(1_922_144_400), localZone: Self.berlin)  // 11-29 02:00
        == Self.instant(1_922_310_000).advanced(by: .microseconds(-1)))  // 12-01 00:00
    // A weekday that cannot match, or no hour left today: the next midnight. An hour that can
    // match: the next quarter hour (where a clock change may fall).
    let saturday = 1_774_721_040  // 2026-03-28 19:04 CET, the night Berlin's clocks go forward
    let mondays = try CalendarEvent("Mon *-*-* 12/7:04:00")
    #expect(
      mondays.restart(after: Self.instant(saturday + 86_400), localZone: Self.berlin)
        == Self.instant(1_774_821_600).advanced(by: .microseconds(-1)))  // Mon 00:00 CEST
    let daily = try CalendarEvent("*-*-* 12/7:04:00")
    #expect(
      daily.restart(after: Self.instant(saturday), localZone: Self.berlin)
        == Self.instant(saturday + 660).advanced(by: .microseconds(-1)))  // 19:15
    #expect(
      daily.restart(after: Self.instant(saturday + 3600), localZone: Self.berlin)
        == Self.instant(1_774_738_800).advanced(by: .microseconds(-1)))  // Sun 00:00 CET
  }

  private static func instant(_ seconds: Int) -> WallInstant {
    WallInstant(nanosecondsSince1970: Int64(seconds) * 1_000_000_000)
  }

  @Test("month ends and leap days")
  func monthEndsAndLeapDays() throws {
    #expect(
      try Self.elapses("*-02~1", after: 1_672_531_200, count: 3, zone: .utc) == [
        "2023-02-28T00:00:00+00:00", "2024-02-29T00:00:00+00:00", "2025-02-28T00:00:00+00:00",
      ])
    #expect(
      try Self.elapses("*-02-29 12:00 UTC", after: 4_070_908_800, count: 1) == [
        "2104-02-29T12:00:00+00:00"
      ])
    #expect(try Self.elapses("*-02-30", after: 0) == [])
  }

  @Test("the local zone follows TZ, with or without a leading colon")
  func localZoneFollowsTZ() {
    #expect(CalendarTimeZones.local(environment: ["TZ": ":Asia/Tokyo"]).identifier == "Asia/Tokyo")
    #expect(
      CalendarTimeZones.local(environment: ["TZ": "America/New_York"]).identifier
        == "America/New_York")
    #expect(CalendarTimeZones.local(environment: ["TZ": ""]) == .utc)
  }
}
