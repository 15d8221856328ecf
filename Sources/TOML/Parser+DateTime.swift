/// Offset date-times, local date-times, local dates and local times (RFC 3339, with `T`, `t` or
/// a space between date and time, and seconds required as TOML 1.0 says).
extension Parser {
  /// Whether the digits at `index` begin a date (`dddd-`) or a time (`dd:`).
  var startsDateOrTime: Bool {
    digits(at: 0, count: 4) && peek(4) == UInt8(ascii: "-")
      || digits(at: 0, count: 2) && peek(2) == UInt8(ascii: ":")
  }

  private func digits(at offset: Int, count: Int) -> Bool {
    (offset..<offset + count).allSatisfy { peek($0).map(Self.isDigit) == true }
  }

  mutating func parseDateTime() throws(TOMLError) -> TOMLDateTime {
    if peek(2) == UInt8(ascii: ":") { return TOMLDateTime(date: nil, time: try parseTime()) }
    let date = try parseDate()
    let separator = current
    let timeFollows =
      separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t")
      || (separator == UInt8(ascii: " ") && digits(at: 1, count: 2)
        && peek(3) == UInt8(ascii: ":"))
    guard timeFollows else { return TOMLDateTime(date: date, time: nil) }
    index += 1
    let time = try parseTime()
    return TOMLDateTime(date: date, time: time, offsetMinutes: try parseOffset())
  }

  private mutating func parseDate() throws(TOMLError) -> TOMLDate {
    let start = markPosition()
    let year = try number(digits: 4, what: "a four-digit year")
    try expectSeparator("-", in: "a date (YYYY-MM-DD)")
    let month = try number(digits: 2, what: "a two-digit month")
    try expectSeparator("-", in: "a date (YYYY-MM-DD)")
    let day = try number(digits: 2, what: "a two-digit day")
    guard (1...12).contains(month) else {
      throw error("invalid date: month \(month) is not between 1 and 12", at: start)
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    guard (1...days).contains(day) else {
      throw error("invalid date: day \(day) is not between 1 and \(days)", at: start)
    }
    return TOMLDate(year: year, month: month, day: day)
  }

  private mutating func parseTime() throws(TOMLError) -> TOMLTime {
    let start = markPosition()
    let hour = try number(digits: 2, what: "a two-digit hour")
    try expectSeparator(":", in: "a time (HH:MM:SS)")
    let minute = try number(digits: 2, what: "two-digit minutes")
    try expectSeparator(":", in: "a time (HH:MM:SS, seconds are required)")
    let second = try number(digits: 2, what: "two-digit seconds")
    guard hour < 24, minute < 60, second < 60 else {
      throw error("invalid time: hour, minute or second out of range", at: start)
    }
    var nanosecond = 0
    if current == UInt8(ascii: ".") {
      index += 1
      guard let first = current, Self.isDigit(first) else {
        throw expected("digits of the fraction of a second after '.'")
      }
      var scale = 100_000_000
      while let byte = current, Self.isDigit(byte) {
        nanosecond += Int(byte - UInt8(ascii: "0")) * scale
        scale /= 10
        index += 1
      }
    }
    return TOMLTime(hour: hour, minute: minute, second: second, nanosecond: nanosecond)
  }

  /// `Z`, `z`, `+HH:MM` or `-HH:MM` in minutes; nil for a local date-time.
  private mutating func parseOffset() throws(TOMLError) -> Int? {
    switch current {
    case UInt8(ascii: "Z")?, UInt8(ascii: "z")?:
      index += 1
      return 0
    case UInt8(ascii: "+")?, UInt8(ascii: "-")?:
      let start = markPosition()
      let sign = current == UInt8(ascii: "-") ? -1 : 1
      index += 1
      let hours = try number(digits: 2, what: "a two-digit offset hour")
      try expectSeparator(":", in: "an offset (+HH:MM)")
      let minutes = try number(digits: 2, what: "two-digit offset minutes")
      guard hours < 24, minutes < 60 else {
        throw error("invalid offset: hour or minute out of range", at: start)
      }
      return sign * (hours * 60 + minutes)
    default:
      return nil
    }
  }

  private mutating func number(digits count: Int, what: String) throws(TOMLError) -> Int {
    var value = 0
    for _ in 0..<count {
      guard let byte = current, Self.isDigit(byte) else { throw expected(what) }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
      index += 1
    }
    return value
  }

  private mutating func expectSeparator(_ separator: Unicode.Scalar, in what: String)
    throws(TOMLError)
  {
    guard current == UInt8(ascii: separator) else { throw expected("'\(separator)' in \(what)") }
    index += 1
  }
}
