import Backgrounder
import Foundation

/// The `--base-time` of `backgrounder calendar`: `@EPOCH` (seconds, optional fraction) or
/// `YYYY-MM-DD HH:MM[:SS] [ZONE]` (ZONE `UTC` or a tz database name; else local time).
enum CalendarBaseTime {
  struct Invalid: Error, CustomStringConvertible {
    var description: String
  }

  static func parse(_ text: String, localZone: CalendarTimeZone) throws -> WallInstant {
    if text.hasPrefix("@") { return try epoch(String(text.dropFirst()), text) }
    var words = text.split(separator: " ").map(String.init)
    var zone = localZone
    if words.count == 3 {
      let name = words.removeLast()
      guard CalendarTimeZones.isValidName(name), let named = CalendarTimeZone(identifier: name)
      else { throw Invalid(description: "unknown time zone '\(name)' in '\(text)'") }
      zone = named
    }
    let date = words.first?.split(separator: "-").compactMap { Int($0) } ?? []
    let time = words.count == 2 ? words[1].split(separator: ":").compactMap { Int($0) } : []
    guard words.count == 2, date.count == 3, time.count == 2 || time.count == 3,
      words[0].split(separator: "-").count == 3,
      words[1].split(separator: ":").count == time.count
    else {
      throw Invalid(
        description: "expected @EPOCH or 'YYYY-MM-DD HH:MM[:SS] [ZONE]', not '\(text)'")
    }
    let second = time.count == 3 ? time[2] : 0
    guard (1...12).contains(date[1]), (1...31).contains(date[2]), (0...23).contains(time[0]),
      (0...59).contains(time[1]), (0...60).contains(second)
    else { throw Invalid(description: "no such time: '\(text)'") }
    return zone.instant(
      year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1],
      second: second)
  }

  private static func epoch(_ digits: String, _ text: String) throws -> WallInstant {
    let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }),
      parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
      let seconds = Int64(parts[0]), seconds < Int64.max / 1_000_000_000
    else { throw Invalid(description: "expected @SECONDS[.FRACTION], not '\(text)'") }
    let fraction = parts.count == 2 ? String(parts[1].prefix(9)) : ""
    let nanoseconds = Int64(fraction.padding(toLength: 9, withPad: "0", startingAt: 0)) ?? 0
    return WallInstant(nanosecondsSince1970: seconds * 1_000_000_000 + nanoseconds)
  }
}
