import Foundation

/// A daily time window, optionally on some weekdays only: `22:00-06:00`, `Sat,Sun 08:00-20:00`,
/// `Mon..Fri 19:00-07:30`. A window whose end is not after its start runs overnight; its
/// weekdays are the days it opens on. Times are wall-clock times in a zone.
public struct TimeWindow: Hashable, Sendable, CustomStringConvertible {
  /// Weekdays it opens on as bits (Monday = bit 0 … Sunday = bit 6); nil for every day.
  public var weekdays: UInt8?
  /// Opening time, minutes after midnight.
  public var start: Int
  /// Closing time, minutes after midnight (at or before ``start``: the next day).
  public var end: Int

  private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

  /// Parses `[DAYS ]HH:MM-HH:MM`, DAYS a comma list of weekdays or ranges (`Mon..Fri`).
  public init(_ text: String) throws(CalendarEventError) {
    func failure(_ reason: String) -> CalendarEventError {
      CalendarEventError(expression: text, reason: reason)
    }
    let words = text.split(separator: " ")
    guard (1...2).contains(words.count) else {
      throw failure("expected '[DAYS ]HH:MM-HH:MM' such as 'Sat,Sun 08:00-20:00'")
    }
    let times = words[words.count - 1].split(separator: "-", omittingEmptySubsequences: false)
    guard times.count == 2 else { throw failure("expected HH:MM-HH:MM at '\(words.last!)'") }
    start = try Self.minutes(times[0], failure)
    end = try Self.minutes(times[1], failure)
    guard start != end else { throw failure("the window opens and closes at the same time") }
    weekdays = words.count == 2 ? try Self.days(words[0], failure) : nil
  }

  private static func minutes(
    _ text: Substring, _ failure: (String) -> CalendarEventError
  ) throws(CalendarEventError) -> Int {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, parts.allSatisfy({ (1...2).contains($0.count) }),
      let hour = Int(parts[0]), let minute = Int(parts[1]), (0...24).contains(hour),
      (0...59).contains(minute), hour < 24 || minute == 0
    else { throw failure("'\(text)' is not a time of day (HH:MM, 00:00 to 24:00)") }
    return hour * 60 + minute
  }

  private static func days(
    _ text: Substring, _ failure: (String) -> CalendarEventError
  ) throws(CalendarEventError) -> UInt8 {
    var bits: UInt8 = 0
    for item in text.split(separator: ",") {
      let bounds = item.components(separatedBy: "..")
      let numbers = bounds.map { name in
        dayNames.firstIndex(of: String(name.lowercased().prefix(3)))
      }
      guard (1...2).contains(bounds.count),
        bounds.allSatisfy({ name in
          let lower = name.lowercased()
          return dayNames.contains(lower)
            || [
              "monday", "tuesday", "wednesday", "thursday", "friday",
              "saturday", "sunday",
            ].contains(lower)
        }), let first = numbers.first!, let last = numbers.last!, first <= last
      else { throw failure("'\(item)' is not a weekday or a range such as Mon..Fri") }
      for day in first...last { bits |= 1 << day }
    }
    guard bits != 0 else { throw failure("no weekdays in '\(text)'") }
    return bits
  }

  /// The window as written in normal form: `Sat,Sun 08:00-20:00`.
  public var description: String {
    let time = { (minutes: Int) in
      (minutes / 60 < 10 ? "0" : "") + "\(minutes / 60):" + (minutes % 60 < 10 ? "0" : "")
        + "\(minutes % 60)"
    }
    let days = weekdays.map { bits in
      (0..<7).filter { bits & (1 << $0) != 0 }.map { Self.dayNames[$0].capitalized }
        .joined(separator: ",") + " "
    }
    return (days ?? "") + time(start) + "-" + time(end)
  }

  /// Whether `instant` is inside the window (opening included, closing excluded).
  public func contains(_ instant: WallInstant, in zone: CalendarTimeZone) -> Bool {
    let (day, minute) = Self.localDayAndMinute(instant, zone)
    if start < end { return opensOn(day) && minute >= start && minute < end }
    return (minute >= start && opensOn(day)) || (minute < end && opensOn(day - 1))
  }

  /// The first instant at or after `instant` inside the window.
  public func nextOpening(atOrAfter instant: WallInstant, in zone: CalendarTimeZone) -> WallInstant
  {
    if contains(instant, in: zone) { return instant }
    let (today, _) = Self.localDayAndMinute(instant, zone)
    for day in today...(today + 8) where opensOn(day) {
      let opening = Self.instant(day: day, minute: start, zone)
      if opening >= instant, contains(opening, in: zone) { return opening }
      // A DST gap can swallow the opening minute: the first minute after it is inside.
      let later = opening.advanced(by: .seconds(3600))
      if later >= instant, contains(later, in: zone) { return later }
    }
    return instant
  }

  /// When the window that contains `instant` closes (nil if `instant` is outside it).
  public func closing(after instant: WallInstant, in zone: CalendarTimeZone) -> WallInstant? {
    guard contains(instant, in: zone) else { return nil }
    let (day, minute) = Self.localDayAndMinute(instant, zone)
    let closesToday = start < end || minute < end
    return Self.instant(day: closesToday ? day : day + 1, minute: end, zone)
  }

  private func opensOn(_ day: Int) -> Bool {
    guard let weekdays else { return true }
    return weekdays & (1 << (day + 3).floorModulo(7)) != 0
  }

  /// Days since 1970-01-01 and minutes since midnight of `instant`'s local time.
  private static func localDayAndMinute(_ instant: WallInstant, _ zone: CalendarTimeZone) -> (
    Int, Int
  ) {
    let seconds = instant.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
    let local = seconds + Int64(zone.offset(atSeconds: seconds))
    return (Int(local.floorDivided(by: 86_400)), Int(local.floorModulo(86_400)) / 60)
  }

  /// The instant of local `minute` on `day` (a minute in a DST gap moves past it, as mktime).
  private static func instant(day: Int, minute: Int, _ zone: CalendarTimeZone) -> WallInstant {
    var converter = LocalTimeConverter(zone: zone, near: Int64(day) * 86_400)
    let (year, month, dayOfMonth) = CivilTime.civil(fromDays: day)
    var fields = CivilTime(
      year: year, month0: month - 1, day: dayOfMonth, hour: minute / 60, minute: minute % 60,
      second: 0)
    let seconds = converter.instant(normalizing: &fields)
    return WallInstant(nanosecondsSince1970: seconds * 1_000_000_000)
  }
}
