import Backgrounder
import DBus
import Foundation

/// logind's idle properties (`org.freedesktop.login1.Manager`'s `IdleHint`, `IdleSinceHint`,
/// `IdleSinceHintMonotonic`) as last read or signalled, and what they make of the user's idle
/// state. Pure: the clocks are arguments.
package struct LogindIdleHint: Hashable, Sendable {
  /// `IdleHint`: every session is idle.
  package var idle = false
  /// `IdleSinceHint`: when the hint last changed, `CLOCK_REALTIME` microseconds (0: never).
  package var sinceRealtime: UInt64 = 0
  /// `IdleSinceHintMonotonic`: the same, `CLOCK_MONOTONIC` microseconds (0: never).
  package var sinceMonotonic: UInt64 = 0

  package init(idle: Bool = false, sinceRealtime: UInt64 = 0, sinceMonotonic: UInt64 = 0) {
    self.idle = idle
    self.sinceRealtime = sinceRealtime
    self.sinceMonotonic = sinceMonotonic
  }

  /// The user's idle state at wall time `now` and monotonic time `monotonicNow` (µs): idle
  /// since the monotonic hint (immune to wall-clock steps), else the realtime one, else since
  /// `firstSeen` (the hint says idle, but not since when). A time in the future counts as now.
  package func conditions(now: Date, monotonicNow: UInt64, firstSeen: Date) -> UserIdleConditions {
    guard idle else { return .active }
    let since: Date
    if sinceMonotonic > 0 {
      let ago = monotonicNow > sinceMonotonic ? Double(monotonicNow - sinceMonotonic) / 1e6 : 0
      since = now.addingTimeInterval(-ago)
    } else if sinceRealtime > 0 {
      since = min(now, Date(timeIntervalSince1970: Double(sinceRealtime) / 1e6))
    } else {
      since = firstSeen
    }
    return UserIdleConditions(idleSince: since)
  }

  /// Takes the idle properties among `changed` (a `PropertiesChanged` or `GetAll`), keeping
  /// the others; returns whether one was there.
  package mutating func take(_ changed: [String: BusValue]) -> Bool {
    var seen = false
    if case .bool(let value)? = changed["IdleHint"] {
      idle = value
      seen = true
    }
    if case .uint64(let value)? = changed["IdleSinceHint"] {
      sinceRealtime = value
      seen = true
    }
    if case .uint64(let value)? = changed["IdleSinceHintMonotonic"] {
      sinceMonotonic = value
      seen = true
    }
    return seen
  }
}
