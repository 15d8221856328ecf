import Foundation
import Testing

@testable import Backgrounder

@Suite("Time windows")
struct TimeWindowTests {
  private static let zones = CalendarCorpus.zones.compactMap({ CalendarTimeZone(identifier: $0) })

  private static func instant(_ seconds: Int64) -> WallInstant {
    WallInstant(nanosecondsSince1970: seconds * 1_000_000_000)
  }

  @Test("parses daily, weekday and overnight windows")
  func parses() throws {
    #expect(try TimeWindow("22:00-06:00").description == "22:00-06:00")
    #expect(try TimeWindow("sat,SUN 8:00-20:00").description == "Sat,Sun 08:00-20:00")
    #expect(
      try TimeWindow("Mon..Fri,Sunday 19:00-24:00").description
        == "Mon,Tue,Wed,Thu,Fri,Sun 19:00-24:00")
    for bad in [
      "22:00", "25:00-06:00", "Sat..Mon 1:00-2:00", "Funday 1:00-2:00", "1:00-1:00",
      "a b c", "12:60-13:00",
    ] {
      #expect(throws: CalendarEventError.self, "\(bad)") { try TimeWindow(bad) }
    }
  }

  @Test("an overnight weekday window belongs to the day it opens")
  func overnightWeekdayWindow() throws {
    let window = try TimeWindow("Sat 22:00-06:00")
    let utc = CalendarTimeZone(identifier: "UTC")!
    // 2024-03-02 is a Saturday.
    #expect(window.contains(Self.instant(1_709_416_800), in: utc))  // Sat 22:00
    #expect(window.contains(Self.instant(1_709_445_540), in: utc))  // Sun 05:59
    #expect(!window.contains(Self.instant(1_709_445_600), in: utc))  // Sun 06:00
    #expect(!window.contains(Self.instant(1_709_503_200), in: utc))  // Sun 22:00
    #expect(
      window.nextOpening(atOrAfter: Self.instant(1_709_445_600), in: utc)
        == Self.instant(1_710_021_600))  // next Sat 22:00
    #expect(
      window.closing(after: Self.instant(1_709_416_800), in: utc) == Self.instant(1_709_445_600))
  }

  @Test("a window never lets a run start outside it, and lets it start at the first minute inside")
  func nextOpeningIsTheFirstInstantInside() throws {
    var random = SplitMix64(seed: 0x7769_6E64)
    var failures: [String] = []
    for _ in 0..<150 {
      let start = random.next(in: 0...23) * 60 + [0, 15, 30, 45][random.next(in: 0...3)]
      var end = random.next(in: 0...24) * 60
      if end == start || end > 24 * 60 { end = (start + 90) % (24 * 60) }
      let days =
        random.chance(50)
        ? ""
        : ["Sat,Sun ", "Mon..Fri ", "Tue ", "Sun,Wed "][
          random.next(in: 0...3)]
      let text =
        days + "\(start / 60):\(String(format: "%02d", start % 60))-"
        + "\(end / 60):\(String(format: "%02d", end % 60))"
      let window = try TimeWindow(text)
      let zone = Self.zones[random.next(in: 0...Self.zones.count - 1)]
      // Around the 2024 DST transitions of every zone, and anywhere.
      let base = Int64(
        random.chance(50)
          ? [
            1_711_846_800, 1_729_990_800, 1_710_054_000, 1_730_613_600, 1_712_417_400,
            1_728_142_200,
          ][random.next(in: 0...5)] + random.next(in: -200_000...0)
          : random.next(in: 0...2_000_000_000))
      let due = Self.instant(base)
      let opening = window.nextOpening(atOrAfter: due, in: zone)
      if opening < due || !window.contains(opening, in: zone) {
        failures.append("\(text) in \(zone.identifier) due \(due): starts \(opening)")
        continue
      }
      // No minute between the due time and the opening is inside.
      var minute = (base / 60 + 1) * 60
      while minute < opening.nanosecondsSince1970 / 1_000_000_000 {
        if window.contains(Self.instant(minute), in: zone) {
          failures.append("\(text) in \(zone.identifier) due \(due): \(minute) was inside")
          break
        }
        minute += 60
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(5))")
  }
}
