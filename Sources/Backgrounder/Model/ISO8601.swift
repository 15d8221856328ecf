import Foundation

/// The times of JSON documents and reports: `2026-11-23T09:22:57.123Z` (UTC, milliseconds).
package enum ISO8601 {
  /// Exactly what `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` writes, computed
  /// with integer arithmetic: the format style costs microseconds per call, and `status`
  /// formats thousands of times. Years outside 1970–9999 are left to the format style.
  package static func string(_ date: Date) -> String {
    var text = [UInt8]()
    text.reserveCapacity(24)
    append(date, to: &text)
    return String(decoding: text, as: UTF8.self)
  }

  /// Appends ``string(_:)``'s text as UTF-8 to `text`, without making a `String` (`status`
  /// writes thousands of times straight into its JSON).
  package static func append(_ date: Date, to text: inout [UInt8]) {
    // As Foundation's Gregorian calendar: whole seconds rounded down, the fraction's
    // nanoseconds truncated, then milliseconds truncated.
    let interval = date.timeIntervalSinceReferenceDate
    let whole = interval.rounded(.down)
    guard whole >= -secondsFrom1970To2001, whole < secondsFrom2001To10000 else {
      text += Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date).utf8
      return
    }
    let milliseconds = Int((interval - whole) * 1_000_000_000) / 1_000_000
    let seconds = Int(whole) + Int(secondsFrom1970To2001)
    let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
    let (year, month, day) = civilDate(daysSince1970: days)
    // Written into 24 bytes on the stack, then appended at once: appended digit by digit, the
    // array's checks cost more than the arithmetic.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var end = 0
      func field(_ value: Int, digits: Int, then separator: Unicode.Scalar) {
        var rest = value
        for offset in stride(from: digits - 1, through: 0, by: -1) {
          buffer[end + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
          rest /= 10
        }
        buffer[end + digits] = UInt8(ascii: separator)
        end += digits + 1
      }
      field(year, digits: 4, then: "-")
      field(month, digits: 2, then: "-")
      field(day, digits: 2, then: "T")
      field(secondOfDay / 3600, digits: 2, then: ":")
      field(secondOfDay / 60 % 60, digits: 2, then: ":")
      field(secondOfDay % 60, digits: 2, then: ".")
      field(milliseconds, digits: 3, then: "Z")
      text.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<end]))
    }
  }

  /// Parses what ``string(_:)`` writes.
  static func date(_ text: String) -> Date? {
    try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
  }

  /// 1970-01-01 to 2001-01-01 (Foundation's reference date), in seconds.
  private static let secondsFrom1970To2001: Double = 978_307_200
  /// 2001-01-01 to 10000-01-01, in seconds.
  private static let secondsFrom2001To10000: Double = 252_423_993_600

  /// Year, month and day of the proleptic Gregorian calendar (days ≥ 0 since 1970-01-01).
  /// Howard Hinnant's `civil_from_days`, for days counted from 0000-03-01 in 400-year eras.
  private static func civilDate(daysSince1970: Int) -> (year: Int, month: Int, day: Int) {
    let days = daysSince1970 + 719_468
    let era = days / 146_097
    let dayOfEra = days - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }

}
