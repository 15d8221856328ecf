/// A calendar date (`1979-05-27`).
public struct TOMLDate: Sendable, Hashable {
  /// Year, 0–9999.
  public var year: Int
  /// Month, 1–12.
  public var month: Int
  /// Day of the month, 1–31 (checked against the month and leap years).
  public var day: Int

  /// A date; the parser checks the ranges, this initializer does not.
  public init(year: Int, month: Int, day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }
}

/// A time of day (`07:32:00.999`).
public struct TOMLTime: Sendable, Hashable {
  /// Hour, 0–23.
  public var hour: Int
  /// Minute, 0–59.
  public var minute: Int
  /// Second, 0–59.
  public var second: Int
  /// Fraction of the second in nanoseconds; digits beyond the ninth are dropped.
  public var nanosecond: Int

  /// A time; the parser checks the ranges, this initializer does not.
  public init(hour: Int, minute: Int, second: Int, nanosecond: Int = 0) {
    self.hour = hour
    self.minute = minute
    self.second = second
    self.nanosecond = nanosecond
  }
}

/// One of TOML's four date-time types: offset date-time, local date-time, local date or local
/// time, told apart by which parts are present.
public struct TOMLDateTime: Sendable, Hashable, CustomStringConvertible {
  /// Which of the four types a value is.
  public enum Kind: Sendable, Hashable {
    /// Date, time and offset: `1979-05-27T07:32:00Z`.
    case offsetDateTime
    /// Date and time: `1979-05-27T07:32:00`.
    case localDateTime
    /// A date alone: `1979-05-27`.
    case localDate
    /// A time alone: `07:32:00`.
    case localTime
  }

  /// The date, absent for a local time.
  public var date: TOMLDate?
  /// The time, absent for a local date.
  public var time: TOMLTime?
  /// Offset from UTC in minutes (`Z` is 0), present only for an offset date-time.
  public var offsetMinutes: Int?

  /// A date-time from its parts; `offsetMinutes` only makes sense with both a date and a time.
  public init(date: TOMLDate?, time: TOMLTime?, offsetMinutes: Int? = nil) {
    self.date = date
    self.time = time
    self.offsetMinutes = offsetMinutes
  }

  /// The type this value has.
  public var kind: Kind {
    switch (date, time) {
    case (.some, .some): offsetMinutes == nil ? .localDateTime : .offsetDateTime
    case (.some, .none): .localDate
    default: .localTime
    }
  }

  /// RFC 3339 text: `1979-05-27T07:32:00.5-07:00`, `1979-05-27`, `07:32:00`.
  public var description: String {
    var text = ""
    if let date {
      text +=
        Self.padded(date.year, 4) + "-" + Self.padded(date.month, 2) + "-"
        + Self.padded(date.day, 2)
    }
    if let time {
      if date != nil { text += "T" }
      text +=
        Self.padded(time.hour, 2) + ":" + Self.padded(time.minute, 2) + ":"
        + Self.padded(time.second, 2)
      if time.nanosecond > 0 {
        var fraction = Self.padded(time.nanosecond, 9)
        while fraction.hasSuffix("0") { fraction.removeLast() }
        text += "." + fraction
      }
    }
    if let offsetMinutes {
      if offsetMinutes == 0 {
        text += "Z"
      } else {
        let magnitude = abs(offsetMinutes)
        text +=
          (offsetMinutes < 0 ? "-" : "+") + Self.padded(magnitude / 60, 2) + ":"
          + Self.padded(magnitude % 60, 2)
      }
    }
    return text
  }

  private static func padded(_ number: Int, _ width: Int) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
