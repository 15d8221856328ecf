import Testing

@testable import QuietExecutor

/// When the quiet action is due: a second (here 1,000 ns) of quiet after work, at most once per
/// interval, never while nothing happened.
@Suite("Quiet period")
struct QuietPeriodTests {
  private static func period() -> QuietPeriod {
    QuietPeriod(delay: .nanoseconds(1_000), minimumInterval: .nanoseconds(10_000))
  }

  @Test("nothing is due before any work")
  func idleFromTheStart() {
    var quiet = Self.period()
    #expect(quiet.beforeWait(now: 0) == .wait)
    #expect(quiet.beforeWait(now: 1_000_000) == .wait)
  }

  @Test("after work, the action is due once the delay has passed, then never again")
  func onceAfterABurst() {
    var quiet = Self.period()
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 100) == .waitAtMost(1_000))
    #expect(quiet.beforeWait(now: 600) == .waitAtMost(500), "woken early: waits the rest")
    #expect(quiet.beforeWait(now: 1_100) == .act)
    #expect(quiet.beforeWait(now: 1_101) == .wait)
    #expect(quiet.beforeWait(now: 1_000_000) == .wait, "idle: no more wake-ups")
  }

  @Test("work during the delay starts it again")
  func workPostponesTheAction() {
    var quiet = Self.period()
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 0) == .waitAtMost(1_000))
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 900) == .waitAtMost(1_000))
    #expect(quiet.beforeWait(now: 1_899) == .waitAtMost(1))
    #expect(quiet.beforeWait(now: 1_900) == .act)
  }

  @Test("a burst soon after an action waits for the minimum interval, and is not lost")
  func minimumInterval() {
    var quiet = Self.period()
    quiet.ranWork()
    _ = quiet.beforeWait(now: 0)
    #expect(quiet.beforeWait(now: 1_000) == .act)
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 2_000) == .waitAtMost(9_000), "the interval, not the delay")
    #expect(quiet.beforeWait(now: 11_000) == .act)
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 30_000) == .waitAtMost(1_000), "long after: the delay")
  }

  @Test("durations too long for nanoseconds saturate instead of trapping")
  func saturates() {
    var quiet = QuietPeriod(delay: .seconds(Int64.max), minimumInterval: .seconds(Int64.max))
    quiet.ranWork()
    #expect(quiet.beforeWait(now: 5) == .waitAtMost(Int64.max - 5))
  }
}
