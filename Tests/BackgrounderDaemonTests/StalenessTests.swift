import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// `alert-after`: the pure staleness decision, its words, and the episodes and failures the
/// tracker reports once each.
@Suite struct StalenessTests {
  private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // Tue 2023-11-14 22:13:20 UTC
  private let day: TimeInterval = 86_400
  private let id = try! TaskId("dev.example.backup")

  @Test func countsFromCreationUntilTheFirstSuccessThenFromTheLastSuccess() {
    let never = Staleness(created: t0, lastSuccess: nil, alertAfter: .seconds(3 * 86_400))
    #expect(never.since == t0)
    #expect(never.deadline == t0.addingTimeInterval(3 * day))
    #expect(!never.isStale(at: t0.addingTimeInterval(3 * day - 1)))
    #expect(never.isStale(at: t0.addingTimeInterval(3 * day)))

    let succeeded = Staleness(
      created: t0, lastSuccess: t0.addingTimeInterval(2 * day), alertAfter: .seconds(3 * 86_400))
    #expect(succeeded.deadline == t0.addingTimeInterval(5 * day))
    #expect(!succeeded.isStale(at: t0.addingTimeInterval(4 * day)))

    // Re-created (a `replace`) after its last success: counted from the re-creation.
    let recreated = Staleness(
      created: t0.addingTimeInterval(day), lastSuccess: t0, alertAfter: .seconds(3600))
    #expect(recreated.since == t0.addingTimeInterval(day))
  }

  @Test func theMessageSaysHowLongAndWhatTheJobWaitsForOrFailsWith() throws {
    let utc = try #require(TimeZone(identifier: "UTC"))
    // Mon 2023-11-13 09:12 UTC.
    let monday = Date(timeIntervalSince1970: 1_699_866_720)
    let now = monday.addingTimeInterval(3 * day + 4 * 3600)
    let waiting = StalenessMessage.text(
      since: monday, now: now,
      activity: .init(waitingFor: [.networkRequired(.unmetered)], lastRunEndedAt: nil),
      timeZone: utc)
    #expect(waiting == "no success for 3 d 4 h: waiting for an unmetered network since Mon 09:12")

    let failing = StalenessMessage.text(
      since: monday, now: now,
      activity: .init(
        lastResult: .failure, lastReason: "exit status 1: disk full\ndisk full",
        lastRunEndedAt: monday.addingTimeInterval(day)),
      timeZone: utc)
    #expect(
      failing
        == "no success for 3 d 4 h: failing with exit status 1: disk full (last run Tue 09:12)")

    #expect(
      StalenessMessage.text(since: monday, now: monday.addingTimeInterval(600), activity: .init())
        == "no success for 10 min: it has not run yet")
    #expect(
      StalenessMessage.elapsed(from: monday, to: monday.addingTimeInterval(5 * 3600 + 720))
        == "5 h 12 min")
  }

  @Test func aStaleEpisodeBeginsOnceAndEndsWithASuccess() {
    var tracker = AlertTracker()
    var job = AlertTracker.Job(
      id: id, createdAt: t0, lastSuccessAt: nil, alertAfter: .seconds(3 * 86_400))

    let fresh = tracker.update([job], now: t0.addingTimeInterval(day))
    #expect(fresh.stale.isEmpty && fresh.began.isEmpty)
    #expect(fresh.nextDeadline == t0.addingTimeInterval(3 * day))

    let stale = tracker.update([job], now: t0.addingTimeInterval(3 * day))
    #expect(stale.began.map(\.id) == [id])
    #expect(stale.stale.map(\.id) == [id])
    #expect(stale.nextDeadline == nil, "a stale job arms no timer")

    let still = tracker.update([job], now: t0.addingTimeInterval(4 * day))
    #expect(still.began.isEmpty, "once per episode")
    #expect(still.stale.map(\.id) == [id])

    job.lastSuccessAt = t0.addingTimeInterval(4 * day)
    let cleared = tracker.update([job], now: t0.addingTimeInterval(4 * day))
    #expect(cleared.stale.isEmpty && cleared.ended == [id])
    #expect(cleared.nextDeadline == t0.addingTimeInterval(7 * day))

    let again = tracker.update([job], now: t0.addingTimeInterval(7 * day))
    #expect(again.began.map(\.id) == [id], "a new episode after a success")
    #expect(again.began.first?.lastSuccessAt == t0.addingTimeInterval(4 * day))
  }

  @Test func anEpisodeRecordedBeforeARestartDoesNotBeginAgain() {
    let job = AlertTracker.Job(
      id: id, createdAt: t0, lastSuccessAt: nil, alertAfter: .seconds(3 * 86_400))
    var before = AlertTracker()
    #expect(before.update([job], now: t0.addingTimeInterval(3 * day)).began.map(\.id) == [id])

    // A new daemon with the recorded episodes: still stale, not begun again.
    var after = AlertTracker(episodes: before.episodes)
    let resumed = after.update([job], now: t0.addingTimeInterval(5 * day))
    #expect(resumed.stale.map(\.id) == [id] && resumed.began.isEmpty && resumed.ended.isEmpty)

    // An episode recorded for another start (a success came while no daemon ran) is another.
    var succeeded = job
    succeeded.lastSuccessAt = t0.addingTimeInterval(day)
    var later = AlertTracker(episodes: before.episodes)
    #expect(later.update([succeeded], now: t0.addingTimeInterval(5 * day)).began.map(\.id) == [id])
  }

  @Test func aFinishedOneTimeJobOrOneWithoutAlertAfterIsNeverStale() {
    var tracker = AlertTracker()
    let done = AlertTracker.Job(
      id: id, createdAt: t0, lastSuccessAt: t0, alertAfter: .seconds(60), finishedForGood: true)
    let other = AlertTracker.Job(
      id: try! TaskId("dev.example.other"), createdAt: t0, lastSuccessAt: nil, alertAfter: nil)
    let update = tracker.update([done, other], now: t0.addingTimeInterval(10 * day))
    #expect(update.stale.isEmpty && update.nextDeadline == nil)
  }

  @Test func eachFailureIsReportedOnceAndNotTheOnesAlreadyStored() {
    var tracker = AlertTracker()
    var job = AlertTracker.Job(
      id: id, createdAt: t0, lastSuccessAt: nil, alertAfter: nil, lastFailureAt: t0)
    #expect(tracker.update([job], now: t0).failed.isEmpty, "stored before the first look")
    #expect(tracker.update([job], now: t0.addingTimeInterval(1)).failed.isEmpty)
    job.lastFailureAt = t0.addingTimeInterval(day)
    #expect(tracker.update([job], now: t0.addingTimeInterval(day)).failed == [id])
    #expect(tracker.update([job], now: t0.addingTimeInterval(day + 1)).failed.isEmpty)
  }

  @Test func theConfigReadsAlertAfterAndHooksPerJobAndDaemonDefaults() throws {
    let configuration = try ConfigurationLoader.parse(
      """
      [daemon]
      on-failure = ["/usr/local/bin/page", "failure"]
      [[job]]
      id = "dev.example.backup"
      command = ["/bin/true"]
      every = "1d"
      alert-after = "3d"
      on-stale = ["/usr/local/bin/page", "stale"]
      [[job]]
      id = "dev.example.plain"
      command = ["/bin/true"]
      every = "1d"
      """, path: "/etc/backgrounder/config.toml")
    let alerts = try #require(configuration.alerts["dev.example.backup"])
    #expect(alerts.alertAfter == .seconds(3 * 86_400))
    #expect(alerts.onStale == ["/usr/local/bin/page", "stale"])
    #expect(alerts.merged(withDefaults: configuration.alertDefaults).onFailure?.last == "failure")
    #expect(configuration.alerts["dev.example.plain"] == nil)

    #expect {
      try ConfigurationLoader.parse(
        """
        [[job]]
        id = "dev.example.backup"
        command = ["/bin/true"]
        every = "1d"
        alert-after = "soon"
        """, path: "/etc/backgrounder/config.toml")
    } throws: { "\($0)".contains("alert-after") && "\($0)".contains("config.toml:5") }
    #expect {
      try ConfigurationLoader.parse(
        "[daemon]\non-stale = []\n", path: "/etc/backgrounder/config.toml")
    } throws: { "\($0)".contains("on-stale") }
  }
}
