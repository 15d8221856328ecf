import PropertyBased
import TestSupport
import Testing

@testable import Backgrounder

/// The window arithmetic of ``MeteredBudget``: trailing windows count exactly the records of
/// the last N seconds and free them oldest first; monthly windows reset at local midnight of
/// their day (the month's last day when shorter), across daylight-saving changes, including
/// zones that change at midnight (America/Santiago, Asia/Beirut, America/Havana).
@Suite(.cpuBound) struct MeteredBudgetProperties {
  static let zones = [
    "UTC", "Europe/Berlin", "America/New_York", "America/Santiago", "Asia/Beirut",
    "America/Havana", "Australia/Lord_Howe",
  ].compactMap { CalendarTimeZone(identifier: $0) }
  /// 2020-01-01 UTC; instants are drawn from the 10 years after it.
  static let base: Int64 = 1_577_836_800
  static let span: Int64 = 10 * 366 * 86_400

  static func instant(_ seconds: Int64) -> WallInstant {
    WallInstant(nanosecondsSince1970: seconds * 1_000_000_000)
  }

  static func seconds(_ instant: WallInstant) -> Int64 {
    instant.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
  }

  @Test("a trailing window counts the last N seconds' records and frees the oldest first")
  func trailingWindow() async {
    let records = zip(Gen.int(in: 0...(40 * 86_400)), Gen.int(in: 0...5_000_000))
      .array(of: 0...30)
    await propertyCheck(
      count: 300, input: records, Gen.int(in: 0...(40 * 86_400)), Gen.int(in: 1...(31 * 24))
    ) { pairs, offset, hours in
      let budget = MeteredBudget(bytes: 10_000_000, window: .trailing(seconds: Int64(hours) * 3600))
      let all = pairs.map {
        MeteredUsageRecord(at: Self.instant(Self.base + Int64($0.0)), bytes: Int64($0.1))
      }
      let now = Self.instant(Self.base + Int64(offset))
      let past = all.filter { $0.at <= now }
      let standing = budget.standing(of: all, at: now, zone: .utc)
      let windowSeconds = Int64(hours) * 3600
      let expected = past.filter { Self.seconds($0.at) > Self.seconds(now) - windowSeconds }
        .filter { $0.bytes > 0 }
      #expect(standing.used == expected.reduce(0) { $0 + $1.bytes })
      #expect(standing.isSpent == (standing.used >= budget.bytes))
      #expect(standing.left == max(0, budget.bytes - standing.used))
      guard let freesAt = standing.freesAt else {
        #expect(expected.isEmpty)
        return
      }
      #expect(freesAt > now)
      // Nothing frees before freesAt; at freesAt exactly freesBytes do.
      let justBefore = freesAt.advanced(by: .nanoseconds(-1))
      #expect(budget.standing(of: past, at: justBefore, zone: .utc).used == standing.used)
      #expect(
        budget.standing(of: past, at: freesAt, zone: .utc).used
          == standing.used - standing.freesBytes)
      #expect(standing.freesBytes > 0)
    }
  }

  @Test("a monthly window starts at local midnight of its day and ends where the next starts")
  func monthlyWindow() async {
    await propertyCheck(
      count: 400, input: Gen.int(in: 0...Int(Self.span)), Gen.int(in: 1...31),
      Gen.int(in: 0...(Self.zones.count - 1))
    ) { offset, day, zoneIndex in
      let zone = Self.zones[zoneIndex]
      let budget = MeteredBudget(bytes: 2_000_000_000, window: .monthly(day: day))
      let now = Self.instant(Self.base + Int64(offset))
      let (start, end) = budget.window(at: now, zone: zone)
      guard let end else {
        Issue.record("a monthly window has an end")
        return
      }
      #expect(start <= now && now < end, "\(start) ≤ \(now) < \(end) in \(zone), day \(day)")
      // Consecutive windows: the one at `end` starts there; the one just before ends there.
      #expect(budget.window(at: end, zone: zone).start == end)
      #expect(budget.window(at: end.advanced(by: .nanoseconds(-1)), zone: zone).start == start)
      #expect(budget.window(at: start, zone: zone).start == start)
      // Each starts on its day (the month's last when shorter) at midnight, or just after a
      // gap that swallowed midnight (at most 2 h of it).
      for reset in [start, end] {
        let seconds = Self.seconds(reset)
        let local = CivilTime(utcSeconds: seconds + Int64(zone.offset(atSeconds: seconds)))
        let month = local.month0 + 1
        let (nextYear, nextMonth) = month == 12 ? (local.year + 1, 1) : (local.year, month + 1)
        let length =
          CivilTime.days(year: nextYear, month: nextMonth, day: 1)
          - CivilTime.days(year: local.year, month: month, day: 1)
        #expect(local.day == min(day, length), "\(reset) in \(zone) for day \(day)")
        #expect(local.hour * 3600 + local.minute * 60 + local.second <= 7200)
        // The second before is still the day before: midnight, or the end of a gap that
        // swallowed it.
        let before = CivilTime(utcSeconds: seconds - 1 + Int64(zone.offset(atSeconds: seconds - 1)))
        #expect(before.day != local.day, "\(reset) in \(zone) is not the day's first instant")
      }
      // A month is 28–31 days, give or take a daylight-saving shift.
      let length = Self.seconds(end) - Self.seconds(start)
      #expect(length >= 28 * 86_400 - 2 * 3600 && length <= 31 * 86_400 + 2 * 3600)
    }
  }

  @Test("a monthly window counts only the records since its reset")
  func monthlyCountsSinceReset() async {
    let records = zip(Gen.int(in: 0...(70 * 86_400)), Gen.int(in: 1...5_000_000))
      .array(of: 0...30)
    await propertyCheck(
      count: 200, input: records, Gen.int(in: 0...(70 * 86_400)), Gen.int(in: 1...31)
    ) { pairs, offset, day in
      let zone = CalendarTimeZone(identifier: "Europe/Berlin")!
      let budget = MeteredBudget(bytes: 1, window: .monthly(day: day))
      let all = pairs.map {
        MeteredUsageRecord(at: Self.instant(Self.base + Int64($0.0)), bytes: Int64($0.1))
      }
      let now = Self.instant(Self.base + Int64(offset))
      let standing = budget.standing(of: all, at: now, zone: zone)
      let (start, end) = budget.window(at: now, zone: zone)
      let counted = all.filter { $0.at > start && $0.at <= now }
      #expect(standing.used == counted.reduce(0) { $0 + $1.bytes })
      #expect(standing.freesAt == (counted.isEmpty ? nil : end))
      #expect(standing.freesBytes == (counted.isEmpty ? 0 : standing.used))
    }
  }

  @Test("day 31 resets on a 30-day month's 30th and on February's last day")
  func dayPastMonthEnd() {
    let zone = CalendarTimeZone(identifier: "Europe/Berlin")!
    let budget = MeteredBudget(bytes: 1, window: .monthly(day: 31))
    // 2026-04-15 12:00 local: the window began 2026-03-31 00:00, ends 2026-04-30 00:00.
    let april = zone.instant(year: 2026, month: 4, day: 15, hour: 12, minute: 0, second: 0)
    let (start, end) = budget.window(at: april, zone: zone)
    #expect(start == zone.instant(year: 2026, month: 3, day: 31, hour: 0, minute: 0, second: 0))
    #expect(end == zone.instant(year: 2026, month: 4, day: 30, hour: 0, minute: 0, second: 0))
    let leap = zone.instant(year: 2028, month: 2, day: 10, hour: 0, minute: 0, second: 0)
    #expect(
      budget.window(at: leap, zone: zone).end
        == zone.instant(year: 2028, month: 2, day: 29, hour: 0, minute: 0, second: 0))
  }

  @Test(
    "parsing and the text status shows",
    arguments: [
      ("200MB/1d", 200_000_000, "200 MB/1d"), ("2GB/30d", 2_000_000_000, "2 GB/30d"),
      ("1.5GB/h", 1_500_000_000, "1.5 GB/1h"), ("600KB/12h", 600_000, "600 KB/12h"),
    ])
  func parsing(text: String, bytes: Int64, shown: String) throws {
    let budget = try MeteredBudget(parsing: text)
    #expect(budget.bytes == bytes)
    #expect(budget.description == shown)
  }
}
