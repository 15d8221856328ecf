/// Broken-down wall-clock fields, as C's `struct tm` holds them (any field may be out of
/// range until normalized), with pure proleptic-Gregorian arithmetic.
struct CivilTime: Hashable, Sendable {
  var year: Int
  /// 0–11.
  var month0: Int
  var day: Int
  var hour: Int
  var minute: Int
  var second: Int
  /// -1 unknown, 0 standard time, 1 daylight-saving time (`tm_isdst`).
  var isDST = -1

  init(year: Int, month0: Int, day: Int, hour: Int, minute: Int, second: Int, isDST: Int = -1) {
    self.year = year
    self.month0 = month0
    self.day = day
    self.hour = hour
    self.minute = minute
    self.second = second
    self.isDST = isDST
  }

  /// The fields of `utcSeconds` read as UTC (`gmtime`).
  init(utcSeconds seconds: Int64) {
    let days = Int(seconds.floorDivided(by: 86_400))
    let secondOfDay = Int(seconds - Int64(days) * 86_400)
    let (year, month, day) = Self.civil(fromDays: days)
    self.init(
      year: year, month0: month - 1, day: day, hour: secondOfDay / 3600,
      minute: secondOfDay / 60 % 60, second: secondOfDay % 60, isDST: 0)
  }

  /// Seconds since 1970 if these fields were UTC, normalizing out-of-range fields (`timegm`).
  var secondsAsUTC: Int64 {
    let year = year + month0.floorDivided(by: 12)
    let month = month0 - month0.floorDivided(by: 12) * 12
    let days = Self.days(year: year, month: month + 1, day: 1) + day - 1
    return Int64(days) * 86_400 + Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
  static func days(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = y.floorDivided(by: 400)
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The date of a day count since 1970-01-01.
  static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = z.floorDivided(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// 0 = Monday … 6 = Sunday, of the normalized date.
  var weekdayFromMonday: Int {
    (Int(secondsAsUTC.floorDivided(by: 86_400)) + 3).floorModulo(7)
  }
}

extension BinaryInteger {
  func floorDivided(by divisor: Self) -> Self {
    let quotient = self / divisor
    return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
  }

  func floorModulo(_ divisor: Self) -> Self {
    self - floorDivided(by: divisor) * divisor
  }
}
