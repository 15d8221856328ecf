/// The POSIX `TZ` rule at the end of a TZif file (`CET-1CEST,M3.5.0,M10.5.0/3`), which gives
/// the offsets after the file's last transition.
struct PosixTimeZoneRule: Hashable, Sendable {
  private let standard: CalendarTimeZone.LocalTimeType
  private let daylight: CalendarTimeZone.LocalTimeType?
  /// When daylight time starts (in standard time) and ends (in daylight time).
  private let start: PosixDateRule
  private let end: PosixDateRule

  init?(_ text: String) {
    var scanner = RuleScanner(Array(text.utf8))
    guard let standardName = scanner.name(), let standardOffset = scanner.offset() else {
      return nil
    }
    standard = .init(offset: -standardOffset, isDST: false, abbreviation: standardName)
    guard let daylightName = scanner.name() else {
      guard scanner.atEnd else { return nil }
      daylight = nil
      start = .zeroBased(day: 0, time: 0)
      end = .zeroBased(day: 0, time: 0)
      return
    }
    let daylightOffset = scanner.peekIsComma ? standardOffset - 3600 : scanner.offset()
    guard let daylightOffset else { return nil }
    daylight = .init(offset: -daylightOffset, isDST: true, abbreviation: daylightName)
    guard scanner.consume(","), let start = scanner.dateRule(), scanner.consume(","),
      let end = scanner.dateRule(), scanner.atEnd
    else { return nil }
    self.start = start
    self.end = end
  }

  /// The rule has a daylight-saving part.
  var hasDaylightSavingTime: Bool { daylight != nil }

  func localTimeType(at seconds: Int64) -> CalendarTimeZone.LocalTimeType {
    guard let daylight else { return standard }
    let year = CivilTime(utcSeconds: seconds + Int64(standard.offset)).year
    // Check the neighbouring years too: a rule's moment can fall in the adjacent UTC year.
    var latest: (Int64, Bool)?
    for candidateYear in (year - 1)...(year + 1) {
      let starts = start.localSeconds(in: candidateYear) - Int64(standard.offset)
      let ends = end.localSeconds(in: candidateYear) - Int64(daylight.offset)
      for (moment, isDaylight) in [(starts, true), (ends, false)]
      where moment <= seconds && (latest == nil || moment > latest!.0) {
        latest = (moment, isDaylight)
      }
    }
    return latest?.1 == true ? daylight : standard
  }
}

/// Scans the parts of a POSIX `TZ` rule.
private struct RuleScanner {
  let bytes: [UInt8]
  var position = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  var atEnd: Bool { position == bytes.count }
  var peekIsComma: Bool { position < bytes.count && bytes[position] == UInt8(ascii: ",") }

  mutating func consume(_ character: Unicode.Scalar) -> Bool {
    guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
    position += 1
    return true
  }

  /// `ABC` or `<+1030>`.
  mutating func name() -> String? {
    let start = position
    if consume("<") {
      guard let close = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
      position = close + 1
      return String(decoding: bytes[(start + 1)..<close], as: UTF8.self)
    }
    while position < bytes.count, (bytes[position] | 0x20) >= 0x61, (bytes[position] | 0x20) <= 0x7A
    {
      position += 1
    }
    return position - start >= 3 ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
  }

  /// `[+-]hh[:mm[:ss]]` in seconds.
  mutating func offset() -> Int? {
    let negative = consume("-")
    if !negative { _ = consume("+") }
    guard let hours = number() else { return nil }
    var seconds = hours * 3600
    if consume(":") {
      guard let minutes = number() else { return nil }
      seconds += minutes * 60
      if consume(":") {
        guard let secs = number() else { return nil }
        seconds += secs
      }
    }
    return negative ? -seconds : seconds
  }

  /// Up to three digits (hours go to 167, days to 365): more is not a rule.
  private mutating func number() -> Int? {
    let start = position
    while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 { position += 1 }
    guard (1...3).contains(position - start) else { return nil }
    return Int(String(decoding: bytes[start..<position], as: UTF8.self))
  }

  /// `Mm.w.d[/time]`, `Jn[/time]` or `n[/time]` (time `[+-]hh[:mm[:ss]]`, default 02:00).
  mutating func dateRule() -> PosixDateRule? {
    let rule: PosixDateRule
    if consume("M") {
      guard let month = number(), consume("."), let week = number(), consume("."),
        let weekday = number(), (1...12).contains(month), (1...5).contains(week),
        (0...6).contains(weekday)
      else { return nil }
      rule = .monthWeekDay(month: month, week: week, weekday: weekday, time: 7200)
    } else if consume("J") {
      guard let day = number(), (1...365).contains(day) else { return nil }
      rule = .julianNoLeap(day: day, time: 7200)
    } else {
      guard let day = number(), (0...365).contains(day) else { return nil }
      rule = .zeroBased(day: day, time: 7200)
    }
    guard consume("/") else { return rule }
    guard let time = offset() else { return nil }
    switch rule {
    case .monthWeekDay(let month, let week, let weekday, _):
      return .monthWeekDay(month: month, week: week, weekday: weekday, time: time)
    case .julianNoLeap(let day, _): return .julianNoLeap(day: day, time: time)
    case .zeroBased(let day, _): return .zeroBased(day: day, time: time)
    }
  }
}

/// `Mm.w.d/time`, `Jn/time` or `n/time`: a day of the year and seconds after its midnight.
enum PosixDateRule: Hashable, Sendable {
  case monthWeekDay(month: Int, week: Int, weekday: Int, time: Int)
  case julianNoLeap(day: Int, time: Int)
  case zeroBased(day: Int, time: Int)

  /// Seconds since 1970, read as UTC, of the rule's moment in `year`.
  func localSeconds(in year: Int) -> Int64 {
    let day: Int
    let time: Int
    switch self {
    case .monthWeekDay(let month, let week, let weekday, let t):
      let first = CivilTime.days(year: year, month: month, day: 1)
      let firstWeekday = (first + 4).floorModulo(7)  // 0 = Sunday
      var candidate = first + (weekday - firstWeekday).floorModulo(7) + (week - 1) * 7
      let nextMonth =
        month == 12
        ? CivilTime.days(year: year + 1, month: 1, day: 1)
        : CivilTime.days(year: year, month: month + 1, day: 1)
      while candidate >= nextMonth { candidate -= 7 }
      (day, time) = (candidate, t)
    case .julianNoLeap(let n, let t):
      let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      day = CivilTime.days(year: year, month: 1, day: 1) + n - 1 + (leap && n >= 60 ? 1 : 0)
      time = t
    case .zeroBased(let n, let t):
      (day, time) = (CivilTime.days(year: year, month: 1, day: 1) + n, t)
    }
    return Int64(day) * 86_400 + Int64(time)
  }
}
