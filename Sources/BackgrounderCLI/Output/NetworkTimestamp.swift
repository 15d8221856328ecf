import Glibc

/// RFC 3339 timestamps with microseconds, in UTC: `2025-01-31T12:00:00.123456Z`.
enum NetworkTimestamp {
  /// The current wall-clock time in microseconds since the Unix epoch.
  static func nowMicroseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000
  }

  /// Formats microseconds since the Unix epoch.
  static func rfc3339(microseconds: Int64) -> String {
    var formatter = Formatter()
    var bytes: [UInt8] = []
    formatter.append(microseconds: microseconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Writes timestamps as bytes; the date and time of day are computed once per second (a
  /// `--watch` line costs no calendar arithmetic when the last one was in the same second).
  struct Formatter {
    private var second: Int64?
    private var dateAndTime: [UInt8] = []

    /// Appends `YYYY-MM-DDTHH:MM:SS.ffffffZ` for `microseconds` since the Unix epoch.
    mutating func append(microseconds: Int64, to bytes: inout [UInt8]) {
      let (seconds, fraction) = microseconds.floorDividedWithRemainder(by: 1_000_000)
      if second != seconds {
        second = seconds
        dateAndTime = Self.dateAndTime(seconds)
      }
      bytes += dateAndTime
      bytes.append(UInt8(ascii: "."))
      Self.appendDigits(fraction, width: 6, to: &bytes)
      bytes.append(UInt8(ascii: "Z"))
    }

    private static func dateAndTime(_ seconds: Int64) -> [UInt8] {
      var time = time_t(seconds)
      var parts = tm()
      gmtime_r(&time, &parts)
      var bytes: [UInt8] = []
      appendDigits(Int64(parts.tm_year) + 1900, width: 4, to: &bytes)
      let fields: [(separator: Unicode.Scalar, value: Int32)] = [
        ("-", parts.tm_mon + 1), ("-", parts.tm_mday), ("T", parts.tm_hour), (":", parts.tm_min),
        (":", parts.tm_sec),
      ]
      for (separator, value) in fields {
        bytes.append(UInt8(ascii: separator))
        appendDigits(Int64(value), width: 2, to: &bytes)
      }
      return bytes
    }

    /// `value` (not negative) in decimal, left-padded with zeros to `width` digits; more digits
    /// when it needs more.
    private static func appendDigits(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
      var digits = 1
      var shifted = value / 10
      while shifted > 0 {
        digits += 1
        shifted /= 10
      }
      let start = bytes.count
      let count = max(width, digits)
      bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
      var rest = value
      for position in stride(from: start + count - 1, through: start, by: -1) where rest > 0 {
        bytes[position] = UInt8(ascii: "0") + UInt8(rest % 10)
        rest /= 10
      }
    }
  }
}

extension Int64 {
  /// The quotient rounded towards minus infinity, and the (non-negative) remainder.
  fileprivate func floorDividedWithRemainder(by divisor: Int64) -> (Int64, Int64) {
    let quotient = self / divisor - (self % divisor < 0 ? 1 : 0)
    return (quotient, self - quotient * divisor)
  }
}
