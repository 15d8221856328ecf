import Backgrounder
import Foundation
import Testing

@testable import Logind

/// What logind's idle properties make of the user's idle state, with the clocks given.
@Suite struct LogindIdleHintTests {
  private let now = Date(timeIntervalSince1970: 1_700_000_000)
  private let firstSeen = Date(timeIntervalSince1970: 1_699_999_990)

  @Test("not idle: the user is active, whatever the times say")
  func active() {
    let hint = LogindIdleHint(idle: false, sinceRealtime: 1, sinceMonotonic: 1)
    #expect(hint.conditions(now: now, monotonicNow: 5, firstSeen: firstSeen) == .active)
  }

  @Test("idle: since the monotonic hint first (a wall-clock step changes nothing)")
  func monotonicFirst() {
    let hint = LogindIdleHint(
      idle: true, sinceRealtime: 1_000_000, sinceMonotonic: 40_000_000)
    let conditions = hint.conditions(now: now, monotonicNow: 100_000_000, firstSeen: firstSeen)
    #expect(conditions.idleSince == now.addingTimeInterval(-60))
    #expect(conditions.isKnown)
  }

  @Test("idle: the realtime hint without a monotonic one, else since first seen")
  func fallbacks() {
    let realtime = LogindIdleHint(idle: true, sinceRealtime: 1_699_999_700_000_000)
    #expect(
      realtime.conditions(now: now, monotonicNow: 0, firstSeen: firstSeen).idleSince
        == Date(timeIntervalSince1970: 1_699_999_700))
    let none = LogindIdleHint(idle: true)
    #expect(none.conditions(now: now, monotonicNow: 0, firstSeen: firstSeen).idleSince == firstSeen)
    // A hint in the future counts as now.
    let ahead = LogindIdleHint(idle: true, sinceMonotonic: 200)
    #expect(ahead.conditions(now: now, monotonicNow: 100, firstSeen: firstSeen).idleSince == now)
  }

  @Test("a change takes the idle properties it holds and keeps the others")
  func takesChanges() {
    var hint = LogindIdleHint(idle: false, sinceRealtime: 7, sinceMonotonic: 9)
    let docked = hint.take(["Docked": .bool(true)])
    #expect(!docked)
    let idle = hint.take(["IdleHint": .bool(true)])
    #expect(idle)
    #expect(hint == LogindIdleHint(idle: true, sinceRealtime: 7, sinceMonotonic: 9))
    let times = hint.take(["IdleSinceHintMonotonic": .uint64(11), "IdleSinceHint": .uint64(13)])
    #expect(times)
    #expect(hint == LogindIdleHint(idle: true, sinceRealtime: 13, sinceMonotonic: 11))
  }
}
