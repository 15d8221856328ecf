import Logging

/// Refused control connections, logged at a bounded rate: a burst of 10, then one a second,
/// with the count of those not logged (a flood of connections must not flood the journal).
struct RefusalLog {
  private var limiter = LogRateLimiter(burst: 10, linesPerSecond: 1)
  private let start = ContinuousClock.now

  mutating func note(_ reason: String, logger: Logger) {
    let (allowed, suppressed) = limiter.admit(at: start.duration(to: .now))
    guard allowed else { return }
    var metadata: Logger.Metadata = ["reason": "\(reason)"]
    if suppressed > 0 { metadata["not_logged_since"] = "\(suppressed)" }
    logger.warning("control connection refused", metadata: metadata)
  }
}
