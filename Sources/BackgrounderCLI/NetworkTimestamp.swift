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
    var seconds = time_t(microseconds.floorDivided(by: 1_000_000))
    let fraction = microseconds - Int64(seconds) * 1_000_000
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ value: some BinaryInteger, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
      + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
      + ".\(pad(fraction, 6))Z"
  }
}

extension Int64 {
  fileprivate func floorDivided(by divisor: Int64) -> Int64 {
    let quotient = self / divisor
    return (self % divisor < 0) ? quotient - 1 : quotient
  }
}
