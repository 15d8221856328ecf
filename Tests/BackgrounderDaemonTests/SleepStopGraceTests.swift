import Testing

@testable import BackgrounderDaemon

/// A run stopped for sleep gets the runner's grace period cut to logind's delay minus a margin.
@Suite struct SleepStopGraceTests {
  @Test func theGraceFitsLogindsDelay() {
    #expect(SleepStopGrace.grace(runner: .seconds(5), inhibitDelayMax: .seconds(5)) == .seconds(4))
    #expect(
      SleepStopGrace.grace(runner: .seconds(30), inhibitDelayMax: .seconds(2)) == .seconds(1))
  }

  @Test func aShorterRunnerGraceIsKept() {
    #expect(
      SleepStopGrace.grace(runner: .seconds(2), inhibitDelayMax: .seconds(5)) == .seconds(2))
  }

  @Test func neverBelowHalfASecond() {
    #expect(
      SleepStopGrace.grace(runner: .seconds(5), inhibitDelayMax: .milliseconds(200))
        == .milliseconds(500))
    #expect(SleepStopGrace.grace(runner: .seconds(5), inhibitDelayMax: .zero) == .milliseconds(500))
  }

  @Test func anUnknownDelayKeepsTheRunnerGrace() {
    #expect(SleepStopGrace.grace(runner: .seconds(5), inhibitDelayMax: nil) == .seconds(5))
  }
}
