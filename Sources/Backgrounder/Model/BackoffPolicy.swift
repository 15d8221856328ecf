/// How long to wait before retrying, and how many attempts a cycle gets.
///
/// `attempt` counts from 0. Linear: `initial × (attempt + 1)`; exponential:
/// `initial × 2^attempt`. Every delay is clamped to ``floor`` … ``cap`` (10 s … 5 h).
///
/// Limits, checked when a request is scheduled (a request breaking one is rejected with
/// ``RejectionReason/invalidBackoff(_:)`` naming it, see ``problem``): ``initialDelay`` within
/// ``allowedInitialDelay`` (10 s … 5 h), ``maxAttempts`` within ``allowedAttempts`` (1 … 30),
/// ``jitter`` within 0 … 1.
public struct BackoffPolicy: Hashable, Sendable, Codable {
  /// The growth law.
  public enum Kind: String, Hashable, Sendable, Codable {
    /// `initial × (attempt + 1)`.
    case linear
    /// `initial × 2^attempt`.
    case exponential
  }

  /// The shortest delay ever used (10 s).
  public static let floor: Duration = .seconds(10)
  /// The longest delay ever used (5 h).
  public static let cap: Duration = .seconds(5 * 3600)
  /// The allowed range of ``maxAttempts``.
  public static let allowedAttempts: ClosedRange<Int> = 1...30
  /// The allowed range of ``initialDelay``: ``floor`` … ``cap``.
  public static let allowedInitialDelay: ClosedRange<Duration> = floor...cap

  /// The growth law.
  public var kind: Kind
  /// The first delay (default 30 s, allowed 10 s … 5 h: a request with a delay outside that
  /// range is rejected, not clamped).
  public var initialDelay: Duration
  /// Attempts per cycle before a retry becomes a failure (default 10, allowed 1…30).
  public var maxAttempts: Int
  /// Fraction (0…1) of each delay that is randomised away, to spread a fleet's retries
  /// (default 0; outside 0…1 a request is rejected).
  public var jitter: Double

  /// Creates a policy; use ``linear(initialDelay:maxAttempts:jitter:)`` or
  /// ``exponential(initialDelay:maxAttempts:jitter:)``.
  public init(kind: Kind, initialDelay: Duration, maxAttempts: Int, jitter: Double) {
    self.kind = kind
    self.initialDelay = initialDelay
    self.maxAttempts = maxAttempts
    self.jitter = jitter
  }

  /// Linear backoff: `initial × (attempt + 1)`.
  public static func linear(
    initialDelay: Duration = .seconds(30), maxAttempts: Int = 10, jitter: Double = 0
  ) -> BackoffPolicy {
    BackoffPolicy(
      kind: .linear, initialDelay: initialDelay, maxAttempts: maxAttempts, jitter: jitter)
  }

  /// Exponential backoff: `initial × 2^attempt`.
  public static func exponential(
    initialDelay: Duration = .seconds(30), maxAttempts: Int = 10, jitter: Double = 0
  ) -> BackoffPolicy {
    BackoffPolicy(
      kind: .exponential, initialDelay: initialDelay, maxAttempts: maxAttempts, jitter: jitter)
  }

  /// The default: exponential from 30 s, 10 attempts, no jitter.
  public static let standard = BackoffPolicy.exponential()

  /// Why the policy cannot be used, or `nil` when it is valid.
  public var problem: String? {
    if !Self.allowedAttempts.contains(maxAttempts) {
      return "maxAttempts \(maxAttempts) is outside 1...30"
    }
    if !Self.allowedInitialDelay.contains(initialDelay) {
      return "initialDelay \(initialDelay) is outside 10 seconds...5 hours"
    }
    if !(0...1).contains(jitter) { return "jitter \(jitter) is outside 0...1" }
    return nil
  }

  /// The delay after attempt `attempt` (0-based) failed, without jitter, clamped to floor…cap.
  public func delay(afterAttempt attempt: Int) -> Duration {
    delay(afterAttempt: attempt, jitterSample: 0)
  }

  /// The delay after attempt `attempt` failed; `jitterSample` in 0..<1 removes up to
  /// `jitter × delay`. The result is clamped to floor…cap.
  public func delay(afterAttempt attempt: Int, jitterSample: Double) -> Duration {
    let initial = initialDelay.seconds
    let step = max(0, attempt)
    let raw: Double
    switch kind {
    case .linear: raw = initial * Double(step + 1)
    case .exponential: raw = initial * Double(sign: .plus, exponent: min(step, 62), significand: 1)
    }
    let jittered = raw * (1 - jitter * min(max(jitterSample, 0), 1))
    let clamped = min(max(jittered, Self.floor.seconds), Self.cap.seconds)
    return .nanoseconds(Int64((clamped * 1e9).rounded()))
  }
}

extension Duration {
  /// The duration in seconds as a `Double`.
  var seconds: Double {
    let parts = components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
  }

  /// The duration in whole nanoseconds (saturating).
  var nanoseconds: Int64 {
    let parts = components
    let (high, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return parts.seconds < 0 ? .min : .max }
    return high.addingReportingOverflow(parts.attoseconds / 1_000_000_000).partialValue
  }
}
