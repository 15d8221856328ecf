import Foundation
import TestSupport
import Testing

@testable import Backgrounder

/// Properties of every elapse, over generated expressions, base times and zones.
@Suite("Calendar event properties", .cpuBound)
struct CalendarProperties {
  private static let zones = CalendarCorpus.zones.compactMap({ CalendarTimeZone(identifier: $0) })

  @Test("next(t) > t, elapses strictly increase, and next(e - 1µs) = e for every elapse e")
  func elapsesIncreaseAndAreFixedPoints() async throws {
    var random = SplitMix64(seed: 0x0062_6B67)
    var checked = 0
    var failures: [String] = []
    while checked < 3000 {
      guard let event = try? CalendarEvent(CalendarExpressionGenerator.make(&random)) else {
        continue
      }
      checked += 1
      let zone = Self.zones[random.next(in: 0...Self.zones.count - 1)]
      let base = WallInstant(
        nanosecondsSince1970: Int64(random.next(in: 0...2_000_000_000)) * 1_000_000_000
          + Int64(random.next(in: 0...999_999_999)))
      var previous = base
      for elapse in event.elapses(after: base, count: 4, localZone: zone) {
        let oneMicrosecondBefore = elapse.advanced(by: .microseconds(-1))
        if elapse <= previous
          || event.nextElapse(after: oneMicrosecondBefore, localZone: zone) != elapse
        {
          failures.append("\(event.normalized) in \(zone.identifier) after \(base): \(elapse)")
        }
        previous = elapse
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(10))")
  }

  /// Where systemd's search gives up, `nextElapse` starts it again at `restart(after:)`. That
  /// point must not pass a time that can match: every quarter hour between the base and the
  /// restart is checked by brute force against the year, month, day, weekday and hour fields.
  @Test("restart(after:) skips no quarter hour whose date and hour can match")
  func restartSkipsNoMatchingQuarterHour() {
    var random = SplitMix64(seed: 0x7265_7374)
    var checked = 0
    var failures: [String] = []
    while checked < 250 {
      guard let event = try? CalendarEvent(CalendarExpressionGenerator.make(&random)) else {
        continue
      }
      let zone = Self.zones[random.next(in: 0...Self.zones.count - 1)]
      let base = WallInstant(
        nanosecondsSince1970: Int64(random.next(in: 946_684_800...4_102_444_800)) * 1_000_000_000
          + Int64(random.next(in: 0...999_999_999)))
      let restart = event.restart(after: base, localZone: zone)
      let restartSeconds = restart.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
      let baseSeconds = base.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
      // Gaps longer than a year are walked only up to a year: the fields repeat by then.
      guard restartSeconds - baseSeconds <= 400 * 86_400 else { continue }
      checked += 1
      let eventZone = event.timeZone(localZone: zone)
      var second = (baseSeconds / 900 + 1) * 900
      while second < restartSeconds {
        let local = CivilTime(utcSeconds: second + Int64(eventZone.offset(atSeconds: second)))
        if Self.canMatch(event, local) {
          failures.append("\(event.normalized) in \(zone.identifier) after \(base): \(restart)")
          break
        }
        second += 900
      }
    }
    #expect(failures.isEmpty, "\(failures.prefix(10))")
  }

  /// The date and hour fields of `event` admit `local`: written from the fields' meaning, not
  /// from the search's code.
  private static func canMatch(_ event: CalendarEvent, _ local: CivilTime) -> Bool {
    func admits(_ chain: [CalendarComponent]?, _ value: Int) -> Bool {
      guard let chain else { return true }
      return chain.contains { component in
        if component.start == value { return true }
        guard component.repetition > 0, value > component.start else { return false }
        return (value - component.start) % component.repetition == 0
          && (component.stop < 0 || value <= component.stop)
      }
    }
    let lastDay =
      CivilTime(
        utcSeconds: CivilTime(
          year: local.year, month0: local.month0 + 1, day: 0, hour: 0, minute: 0, second: 0
        ).secondsAsUTC
      ).day
    var dayMatches = admits(event.days, local.day)
    if event.endOfMonth, let days = event.days {
      // `~d` is the d-th day from the end; a range or repetition counts backwards from there
      // (systemd's find_end_of_month), and the search takes the least candidate from the day.
      func fromEnd(_ day: Int) -> Int { day >= 1 && day <= lastDay ? lastDay + 1 - day : -1 }
      var least: Int?
      for component in days {
        var (start, stop) = (fromEnd(component.start), fromEnd(component.stop))
        if stop > 0 { swap(&start, &stop) }
        if start >= local.day {
          least = min(least ?? start, start)
        } else if component.repetition > 0 {
          let steps = (local.day - start + component.repetition - 1) / component.repetition
          let candidate = start + component.repetition * steps
          if stop < 0 || candidate <= stop { least = min(least ?? candidate, candidate) }
        }
      }
      dayMatches = least == local.day
    }
    return admits(event.years, local.year) && admits(event.months, local.month0 + 1)
      && dayMatches
      && (event.weekdays.map { $0 & (1 << local.weekdayFromMonday) != 0 } ?? true)
      && admits(event.hours, local.hour)
  }
}
