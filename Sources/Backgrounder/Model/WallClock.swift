import Foundation

/// A point in wall-clock time: nanoseconds since 1970-01-01 UTC. This is what the store
/// persists, so every clock the runtime uses maps its instants to `Date`.
public struct WallInstant: InstantProtocol, Hashable, Sendable, Codable, CustomStringConvertible {
  /// Nanoseconds since 1970-01-01 00:00:00 UTC.
  public var nanosecondsSince1970: Int64

  /// Creates an instant from nanoseconds since 1970.
  public init(nanosecondsSince1970: Int64) {
    self.nanosecondsSince1970 = nanosecondsSince1970
  }

  /// The instant of `date` (rounded to nanoseconds).
  public init(_ date: Date) {
    self.nanosecondsSince1970 = Int64((date.timeIntervalSince1970 * 1e9).rounded())
  }

  /// The same instant as a `Date`.
  public var date: Date {
    Date(timeIntervalSince1970: Double(nanosecondsSince1970) / 1e9)
  }

  /// The instant `duration` later.
  public func advanced(by duration: Duration) -> WallInstant {
    WallInstant(
      nanosecondsSince1970: nanosecondsSince1970.addingReportingOverflow(duration.nanoseconds)
        .partialValue)
  }

  /// The duration from this instant to `other`.
  public func duration(to other: WallInstant) -> Duration {
    .nanoseconds(other.nanosecondsSince1970 - nanosecondsSince1970)
  }

  /// Orders instants in time.
  public static func < (lhs: WallInstant, rhs: WallInstant) -> Bool {
    lhs.nanosecondsSince1970 < rhs.nanosecondsSince1970
  }

  /// ISO 8601.
  public var description: String { ISO8601.string(date) }
}

/// A clock whose instants are wall-clock times. The runtime takes one so tests can inject a
/// manual clock (`BackgrounderTesting.ManualClock`); production uses ``SystemWallClock``.
public protocol WallClock: Clock where Instant == WallInstant {}

/// The system's wall clock. Sleeping measures the remaining time on the continuous clock
/// (which keeps counting through suspend) and re-checks the wall clock on waking, so a clock
/// set backwards does not make a deadline fire early.
public struct SystemWallClock: WallClock {
  /// Creates the clock.
  public init() {}

  /// Now.
  public var now: WallInstant { WallInstant(Date()) }

  /// One nanosecond.
  public var minimumResolution: Duration { .nanoseconds(1) }

  /// Sleeps until the wall clock reaches `deadline`.
  public func sleep(until deadline: WallInstant, tolerance: Duration?) async throws {
    while true {
      let remaining = now.duration(to: deadline)
      if remaining <= .zero { return }
      try await Task.sleep(for: remaining, tolerance: tolerance, clock: .continuous)
    }
  }
}
