import Foundation
import Reachability
import Testing

@testable import NetworkHints

/// The NetworkManager source's life, with the time passed in (microseconds): waiting at start,
/// bounded by the source timeout, a stale last answer after it leaves, dropped after the limit.
@Suite struct NetworkManagerSourceTests {
  static let limits = NetworkManagerSource.Limits(
    sourceTimeout: .milliseconds(5), staleLimit: .milliseconds(120))
  static let metered = NetworkManagerSnapshot(
    metered: ["wlan0": .guessYes], connectivity: .full, deviceConnectivity: ["wlan0": .full])

  @Test func waitsUntilTheFirstAnswer() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    #expect(source.state == .waiting(since: 100))
    #expect(source.readTimeout == 5_000, "one deadline for the whole read")
    let published = source.answered(Self.metered)
    #expect(published == .init(snapshot: Self.metered, state: .answered))
  }

  @Test func notOnTheBusAtStartIsAbsent() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    #expect(source.notOnBus(now: 0, wall: 101) == .init(snapshot: .absent, state: .absent))
    #expect(source.staleUntil == nil)
  }

  @Test func silentAtStartTimesOutAndIsTreatedAsAbsent() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    #expect(
      source.silent(now: 5_000, wall: 100.005)
        == .init(snapshot: .absent, state: .timedOut(since: 100.005)))
    #expect(source.silent(now: 9_000, wall: 100.009) == nil, "reported once")
    // It answers later: its answer wins.
    #expect(source.answered(Self.metered)?.state == .answered)
  }

  @Test func leavingKeepsTheLastAnswerStaleUntilTheLimit() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    let left = source.notOnBus(now: 1_000, wall: 200)
    #expect(left == .init(snapshot: Self.metered, state: .stale(since: 200)))
    #expect(source.staleUntil == 121_000)
    #expect(source.tick(now: 120_999, wall: 200.12) == nil)
    #expect(source.notOnBus(now: 50_000, wall: 200.05) == nil, "still the same absence")
    let expired = source.tick(now: 121_000, wall: 200.121)
    #expect(expired == .init(snapshot: .absent, state: .expired(since: 200.121)))
    #expect(source.staleUntil == nil)
  }

  @Test func silentAfterAnsweringKeepsTheLastAnswerStale() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    #expect(source.silent(now: 7_000, wall: 150)?.state == .stale(since: 150))
    #expect(source.state.isStale)
  }

  @Test func aFreshAnswerEndsTheStaleness() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    _ = source.notOnBus(now: 1_000, wall: 200)
    var unmetered = Self.metered
    unmetered.metered = ["wlan0": .no]
    #expect(source.answered(unmetered) == .init(snapshot: unmetered, state: .answered))
    #expect(source.staleUntil == nil)
    #expect(source.tick(now: 1_000_000, wall: 300) == nil)
  }

  @Test func backButStillStartingUpKeepsTheStaleAnswer() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    _ = source.notOnBus(now: 1_000, wall: 200)
    var starting = NetworkManagerSnapshot()
    starting.isStartingUp = true
    #expect(source.answered(starting) == nil, "no devices yet: the stale answer stays")
    #expect(source.state == .stale(since: 200))
    var done = Self.metered
    done.isStartingUp = false
    #expect(source.answered(done)?.state == .answered)
  }

  /// `systemctl restart NetworkManager` between two reads: the daemon never saw it away, and
  /// the restarted one, still starting up, guesses the link unmetered before it applies the
  /// connection's `metered = yes`. The last answer stays (stale, with the limit) until it is
  /// done starting.
  @Test func restartedUnseenAndStartingUpKeepsTheLastAnswerStale() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered, now: 0, wall: 100)
    var starting = NetworkManagerSnapshot(metered: ["wlan0": .guessNo], connectivity: .full)
    starting.isStartingUp = true
    let kept = source.answered(starting, now: 1_000, wall: 200)
    #expect(kept == .init(snapshot: Self.metered, state: .stale(since: 200)))
    #expect(source.answered(starting, now: 2_000, wall: 201) == nil, "still starting up")
    var done = Self.metered
    done.isStartingUp = false
    #expect(source.answered(done, now: 3_000, wall: 202)?.state == .answered)
    // Starting up for longer than the stale limit: the kernel decides.
    _ = source.answered(starting, now: 10_000, wall: 300)
    #expect(source.tick(now: 130_000, wall: 300.12)?.state == .expired(since: 300.12))
  }

  @Test func backWithoutAMeteredAnswerForALinkKeepsThatLinksStaleAnswer() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    _ = source.notOnBus(now: 1_000, wall: 200)
    // Back (restart done), but wlan0's `Metered` is still unknown (lease not read again).
    let early = NetworkManagerSnapshot(connectivity: .unknown)
    let merged = source.answered(early)
    #expect(merged?.state == .stale(since: 200), "wlan0's answer is still the stale one")
    #expect(merged?.snapshot.metered == ["wlan0": .guessYes])
    #expect(merged?.snapshot.connectivity == .unknown, "connectivity is its fresh answer")
    // NetworkManager answers for wlan0 again: fresh, no longer stale.
    var back = Self.metered
    back.metered = ["wlan0": .guessYes, "eth0": .no]
    #expect(source.answered(back) == .init(snapshot: back, state: .answered))
    #expect(source.staleUntil == nil)
  }

  @Test func backButSilentAboutALinkUntilTheLimitLeavesItsOwnAnswer() {
    var source = NetworkManagerSource(limits: Self.limits, wall: 100)
    _ = source.answered(Self.metered)
    _ = source.notOnBus(now: 1_000, wall: 200)
    let early = NetworkManagerSnapshot(connectivity: .full)
    _ = source.answered(early)
    let expired = source.tick(now: 121_000, wall: 200.121)
    #expect(expired == .init(snapshot: early, state: .answered))
  }

  @Test func theHintsKeepTheirSourceStatesAcrossTheControlSocket() throws {
    var hints = LinkHints()
    hints.networkManagerMetered = ["wlan0": .guessYes]
    hints.networkManagerConnectivity = .portal
    hints.networkManagerDeviceConnectivity = ["wlan0": .portal]
    hints.networkManagerChecksConnectivity = true
    hints.ssids = ["wlan0": "Pixel"]
    hints.probe = ("wlan0", .limited)
    hints.sources = [.networkManager: .stale(since: 1_764_158_590), .nl80211: .answered]
    let data = try JSONEncoder().encode(hints)
    #expect(try JSONDecoder().decode(LinkHints.self, from: data) == hints)
  }
}
