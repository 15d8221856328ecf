import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import Backgrounder

/// The elapse one catch-up run stands for (the latest missed), found directly however far
/// behind the schedule is: the same answer as walking every missed elapse, in a bounded number
/// of searches. (How long it takes is measured in `Benchmarks/CalendarJobs/catch-up-start.py`,
/// not here.)
@Suite("Calendar catch-up", .cpuBound)
struct CatchUpProperties {
  private static let zones = CalendarCorpus.zones.compactMap { CalendarTimeZone(identifier: $0) }
  private static let microsecondsIn50Years = Int64(50 * 365.25 * 86_400) * 1_000_000
  /// At most this many elapses walked by the reference; beyond, the answer is checked by what
  /// defines it.
  private static let referenceSteps = 300

  /// The old way, kept here only: walk every elapse after `last` up to `now`.
  private static func walk(
    _ schedule: CalendarSchedule, after last: WallInstant, atOrBefore now: WallInstant
  ) -> (answer: WallInstant?, complete: Bool) {
    guard let first = schedule.nextElapse(after: last), first <= now else { return (nil, true) }
    var latest = first
    for _ in 0..<referenceSteps {
      guard let later = schedule.nextElapse(after: latest), later <= now else {
        return (latest, true)
      }
      latest = later
    }
    // Its last step may have reached the answer itself: complete when nothing follows.
    guard let later = schedule.nextElapse(after: latest), later <= now else {
      return (latest, true)
    }
    return (latest, false)
  }

  /// Every zone the expressions may use.
  private static let allZones = [
    "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
  ].compactMap { CalendarTimeZone(identifier: $0) }

  /// Whether `a` and `b` differ and are the same local time in a zone whose clocks went back
  /// between them.
  private static func sameWallClock(_ a: WallInstant?, _ b: WallInstant?) -> Bool {
    guard let a, let b, a != b else { return false }
    let seconds = (a.nanosecondsSince1970 / 1_000_000_000, b.nanosecondsSince1970 / 1_000_000_000)
    guard abs(seconds.0 - seconds.1) <= 3600 else { return false }
    return allZones.contains { zone in
      seconds.0 + Int64(zone.offset(atSeconds: seconds.0))
        == seconds.1 + Int64(zone.offset(atSeconds: seconds.1))
    }
  }

  /// A gap of 1µs to 50 years, spread evenly over the orders of magnitude.
  private static func gap(bits: Int, fraction: Int) -> Int64 {
    let base = Int64(1) << bits
    return min(base + base * Int64(fraction) >> 20, microsecondsIn50Years)
  }

  @Test("random expressions × gaps up to 50 years: the walk's answer, in ≤ 54 searches")
  func latestMissedElapseEqualsTheWalk() async {
    await propertyCheck(
      count: 200, input: Gen.int(in: 0...Int.max), Gen.int(in: 0...Self.zones.count - 1),
      Gen.int(in: 788_918_400...2_208_988_800), Gen.int(in: 0...50), Gen.int(in: 0...(1 << 20))
    ) { seed, zoneIndex, baseSeconds, bits, fraction in
      var random = SplitMix64(seed: UInt64(seed))
      var events: [CalendarEvent] = []
      while events.count < 1 + seed % 2 {
        if let event = try? CalendarEvent(CalendarExpressionGenerator.make(&random)) {
          events.append(event)
        }
      }
      let schedule = CalendarSchedule(events: events, localZone: Self.zones[zoneIndex])
      let last = WallInstant(
        nanosecondsSince1970: Int64(baseSeconds) * 1_000_000_000
          + Int64(random.next(in: 0...999_999_999)))
      let now = last.advanced(by: .microseconds(Self.gap(bits: bits, fraction: fraction)))
      var searches = 0
      let answer = CalendarSchedule.latestElapse(after: last, atOrBefore: now) {
        searches += 1
        return schedule.nextElapse(after: $0)
      }
      let zone = Self.zones[zoneIndex].identifier
      let context = "\(events.map(\.normalized)) in \(zone), \(last) → \(now)"
      #expect(answer == schedule.latestElapse(after: last, atOrBefore: now), "\(context)")
      #expect(searches <= 54, "\(searches) searches: \(context)")
      let reference = Self.walk(schedule, after: last, atOrBefore: now)
      if reference.complete {
        // Equal; or, over a fall-back night, the same repeated wall-clock time an hour apart
        // (systemd's next elapse skips the repeated one when reached from before the change,
        // not when reached from after it): the same elapse for the run it stands for.
        #expect(
          answer == reference.answer || Self.sameWallClock(answer, reference.answer),
          "\(String(describing: answer)) ≠ \(String(describing: reference.answer)): \(context)")
      } else if let answer {
        // Too far for the walk: what defines the answer — an elapse, after the walk's first
        // stretch, not after now, and the next one after now.
        #expect(answer > reference.answer! && answer <= now, "\(context)")
        #expect(schedule.nextElapse(after: answer.advanced(by: .microseconds(-1))) == answer)
        #expect(schedule.nextElapse(after: answer).map { $0 > now } ?? true, "\(context)")
      } else {
        Issue.record("no answer, but the walk found \(reference.answer!): \(context)")
      }
    }
  }

  @Test("a per-second job 50 years behind: one catch-up run, for the last second, in ≤ 54 searches")
  func perSecondJobFiftyYearsBehind() throws {
    let schedule = CalendarSchedule(events: [try CalendarEvent("*:*:*")], localZone: .utc)
    let last = WallInstant(nanosecondsSince1970: 1_000_000_000 * 1_000_000_000)
    let now = last.advanced(by: .seconds(50 * 365 * 86_400 + 0.5))
    var searches = 0
    let latest = CalendarSchedule.latestElapse(after: last, atOrBefore: now) {
      searches += 1
      return schedule.nextElapse(after: $0)
    }
    let lastSecond = now.advanced(by: .milliseconds(-500))
    #expect(latest == lastSecond)
    #expect(searches <= 54)
    let due = try #require(schedule.due(lastElapse: last, now: now))
    #expect(due.isCatchUp && due.elapse == lastSecond && due.startAt == now)
  }

  @Test("an elapse every microsecond, a second missed: found by bisection, not by a walk")
  func neverWalksTheMissedElapses() {
    // A walk would need a million searches; this `next` answers 10,000, then no more (a walk
    // then stops at a wrong, early elapse instead of running for long).
    var searches = 0
    let everyMicrosecond = { (instant: WallInstant) -> WallInstant? in
      searches += 1
      guard searches <= 10_000 else { return nil }
      let microseconds = instant.nanosecondsSince1970.floorDivided(by: 1000)
      return WallInstant(nanosecondsSince1970: (microseconds + 1) * 1000)
    }
    let last = WallInstant(nanosecondsSince1970: 1_700_000_000 * 1_000_000_000)
    let now = last.advanced(by: .seconds(1))
    let latest = CalendarSchedule.latestElapse(
      after: last, atOrBefore: now, next: everyMicrosecond)
    #expect(latest == now)
    #expect(searches <= 25)
  }

  @Test("a repetition of the seconds shorter than 1s is refused, naming it; 1s is accepted")
  func subSecondRepetitionIsRefused() throws {
    for (expression, shown) in [
      ("*-*-* *:*:00/0.000001", "0.000001s"), ("*:*:0/0.5", "0.5s"),
      ("*:*:10..20/0.25", "0.25s"), ("*:*:0,30/0.999999", "0.999999s"),
    ] {
      let error = #expect(throws: CalendarEventError.self) { try CalendarEvent(expression) }
      let description = error.map { "\($0)" } ?? ""
      #expect(
        description.contains(expression) && description.contains(shown)
          && description.contains("shorter than 1s"), "\(description)")
    }
    for expression in ["*:*:0/1", "*:*:*", "*:*:0/7.5", "*:*:00.1,00.2", "*:*:1.5"] {
      #expect(throws: Never.self, "\(expression)") { _ = try CalendarEvent(expression) }
    }
  }
}
