/// A token bucket for a run's output lines: `burst` lines at once, then `linesPerSecond`.
/// Lines over the limit are counted, not logged; the count is reported when lines flow again
/// and when the run ends.
struct LogRateLimiter: Sendable {
  let burst: Double
  let linesPerSecond: Double
  private var tokens: Double
  private var last: Duration?
  /// Lines not logged since the last report.
  private(set) var suppressed = 0

  init(burst: Int = 200, linesPerSecond: Int = 50) {
    self.burst = Double(burst)
    self.linesPerSecond = Double(linesPerSecond)
    tokens = Double(burst)
  }

  /// Whether a line arriving at `now` (time since any fixed origin) may be logged. When it may
  /// and lines were suppressed before it, returns their count too (and resets it).
  mutating func admit(at now: Duration) -> (allowed: Bool, suppressedBefore: Int) {
    if let last {
      let elapsed = Double((now - last) / .milliseconds(1)) / 1000
      tokens = min(burst, tokens + max(0, elapsed) * linesPerSecond)
    }
    last = now
    guard tokens >= 1 else {
      suppressed += 1
      return (false, 0)
    }
    tokens -= 1
    defer { suppressed = 0 }
    return (true, suppressed)
  }

  /// The lines suppressed since the last report (and resets the count).
  mutating func takeSuppressed() -> Int {
    defer { suppressed = 0 }
    return suppressed
  }
}
