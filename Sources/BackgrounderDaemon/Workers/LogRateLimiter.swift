/// A token bucket for a run's output lines: `burst` lines at once, then `linesPerSecond`.
/// Lines over the limit are counted, not logged; the count is reported with the first line
/// logged after `reportInterval` has passed since the last report, and when the run ends.
struct LogRateLimiter: Sendable {
  let burst: Double
  let linesPerSecond: Double
  let reportInterval: Duration
  private var tokens: Double
  private var last: Duration?
  private var lastReport: Duration = .zero
  /// Lines not logged since the last report.
  private(set) var suppressed = 0

  init(burst: Int = 200, linesPerSecond: Int = 50, reportInterval: Duration = .seconds(10)) {
    self.burst = Double(burst)
    self.linesPerSecond = Double(linesPerSecond)
    self.reportInterval = reportInterval
    tokens = Double(burst)
  }

  /// Whether a line arriving at `now` (time since the run started) may be logged; when it may
  /// and a report of the lines suppressed before it is due, their count (which is then reset).
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
    guard suppressed > 0, now - lastReport >= reportInterval else { return (true, 0) }
    lastReport = now
    defer { suppressed = 0 }
    return (true, suppressed)
  }

  /// The lines suppressed since the last report (and resets the count).
  mutating func takeSuppressed() -> Int {
    defer { suppressed = 0 }
    return suppressed
  }
}
