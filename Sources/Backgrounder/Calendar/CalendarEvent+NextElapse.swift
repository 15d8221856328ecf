import Foundation

extension CalendarEvent {
  /// The last year systemd schedules in.
  static let maximumYear = 2199

  /// What follows an instant.
  public enum Next: Hashable, Sendable {
    /// The next elapse.
    case elapse(WallInstant)
    /// The event never elapses again (a date in the past, a February 30th).
    case never
    /// The search did not settle within systemd's 1,000 steps (systemd reports an "infinite
    /// loop in calendar calculation"); a time zone's transitions can make this happen.
    case unresolved
  }

  /// The first elapse strictly after `instant` (to the microsecond, as systemd counts), or
  /// nil when there is none (``Next/never``). `localZone` is the zone of ``Zone/local``.
  ///
  /// Where systemd's search gives up (``Next/unresolved``; systemd 252 then says "infinite
  /// loop in calendar calculation" and the timer never elapses again), the search starts again
  /// later, where it cannot have skipped an elapse (``restart(after:localZone:)``), up to 192
  /// times: a job is not dropped for the search's sake. systemd gives up on a repetition such
  /// as `12/7` carried past a day's end into a day whose clocks change, and on a month
  /// repetition such as `06/5` (June and November) searched from a later month (December).
  /// ``next(after:localZone:)`` keeps systemd's answer.
  public func nextElapse(
    after instant: WallInstant, localZone: CalendarTimeZone = CalendarTimeZones.local()
  ) -> WallInstant? {
    var base = instant
    for _ in 0...(2 * 24 * 4) {
      switch next(after: base, localZone: localZone) {
      case .elapse(let next): return next
      case .never: return nil
      case .unresolved: base = restart(after: base, localZone: localZone)
      }
    }
    return nil
  }

  /// Where a search given up at `base` starts again: one microsecond before the first local
  /// time that may match, judged field by field from the year down to the hour (the next
  /// matching year, month, day or hour; the next day when today's weekday or hours cannot
  /// match); when the hour can match, the next quarter hour (every zone's offsets are whole
  /// quarter hours, so a clock change falls on one). No elapse lies before the point chosen.
  func restart(after base: WallInstant, localZone: CalendarTimeZone) -> WallInstant {
    let quarterHour: Int64 = 900 * 1_000_000_000
    let quarter =
      ((base.nanosecondsSince1970 + 1000).floorDivided(by: quarterHour) + 1) * quarterHour
    let seconds = (base.nanosecondsSince1970 + 1000).floorDivided(by: 1_000_000_000)
    var converter = LocalTimeConverter(
      zone: CalendarTimeZones.timeZone(zone, local: localZone), near: seconds)
    let local = converter.fields(at: seconds)
    var start = CivilTime(
      year: local.year, month0: local.month0, day: local.day, hour: local.hour, minute: 0,
      second: 0)
    let year = Self.firstMatch(years, atOrAfter: local.year) ?? local.year + 1
    // Past the last month or hour (a repetition runs on: `06/5` gives 16): the next year's
    // January, the next day's midnight.
    let month = min(Self.firstMatch(months, atOrAfter: local.month0 + 1) ?? 13, 13)
    // A day past the month's end (the 31st in November) waits for the next month's first.
    let lastDay = CivilTime(
      utcSeconds: CivilTime(
        year: local.year, month0: local.month0 + 1, day: 0, hour: 0, minute: 0, second: 0
      ).secondsAsUTC
    ).day
    let day = min(
      Self.firstMatch(dayChain(lastDay: lastDay), atOrAfter: local.day) ?? 32, lastDay + 1)
    let weekday = weekdays.map { $0 & (1 << local.weekdayFromMonday) != 0 } ?? true
    let hour = min(Self.firstMatch(hours, atOrAfter: local.hour) ?? 24, 24)
    if year != local.year {
      (start.year, start.month0, start.day, start.hour) = (year, 0, 1, 0)
    } else if month != local.month0 + 1 {
      (start.month0, start.day, start.hour) = (month - 1, 1, 0)
    } else if day != local.day {
      (start.day, start.hour) = (day, 0)
    } else if !weekday {
      (start.day, start.hour) = (local.day + 1, 0)
    } else if hour != local.hour {
      start.hour = hour
    } else {
      return WallInstant(nanosecondsSince1970: quarter - 1000)
    }
    let next = converter.instant(normalizing: &start) * 1_000_000_000
    // Never before the next quarter hour (a repeated hour read at its first occurrence, say):
    // that is always safe.
    return WallInstant(nanosecondsSince1970: max(next, quarter) - 1000)
  }

  /// The days of a month whose last is `lastDay`: ``days``, counted from the end with `~` as
  /// the search counts them (systemd's `find_end_of_month`).
  private func dayChain(lastDay: Int) -> [CalendarComponent]? {
    guard endOfMonth, let days else { return days }
    func fromEnd(_ day: Int) -> Int { day >= 1 && day <= lastDay ? lastDay + 1 - day : -1 }
    return days.map { component in
      var (start, stop) = (fromEnd(component.start), fromEnd(component.stop))
      if stop > 0 { swap(&start, &stop) }
      return CalendarComponent(start: start, stop: stop, repetition: component.repetition)
    }
  }

  /// The least of `chain`'s values at or after `value` (systemd's `find_matching_component`),
  /// nil when none is left; `value` when the chain is nil (any value).
  private static func firstMatch(_ chain: [CalendarComponent]?, atOrAfter value: Int) -> Int? {
    guard let chain else { return value }
    return chain.compactMap { component -> Int? in
      if component.start >= value { return component.start }
      guard component.repetition > 0 else { return nil }
      let steps = (value - component.start + component.repetition - 1) / component.repetition
      let candidate = component.start + component.repetition * steps
      return component.stop < 0 || candidate <= component.stop ? candidate : nil
    }.min()
  }

  /// What follows `instant`: its next elapse, or why there is none.
  public func next(
    after instant: WallInstant, localZone: CalendarTimeZone = CalendarTimeZones.local()
  ) -> Next {
    let microseconds = instant.nanosecondsSince1970.floorDivided(by: 1000)
    switch next(afterMicroseconds: microseconds, localZone: localZone) {
    case .elapse(let next): return .elapse(WallInstant(nanosecondsSince1970: next * 1000))
    case .never: return .never
    case .unresolved: return .unresolved
    }
  }

  /// The next `count` elapses after `instant`, each following the one before; fewer when the
  /// event ends.
  public func elapses(
    after instant: WallInstant, count: Int, localZone: CalendarTimeZone = CalendarTimeZones.local()
  ) -> [WallInstant] {
    var result: [WallInstant] = []
    var base = instant
    while result.count < count, let next = nextElapse(after: base, localZone: localZone) {
      result.append(next)
      base = next
    }
    return result
  }

  /// systemd's `calendar_spec_next_usec`: microseconds since 1970 in and out.
  func next(afterMicroseconds base: Int64, localZone: CalendarTimeZone) -> MicrosecondElapse {
    guard base >= -1 else { return .never }
    let start = base + 1
    let seconds = start.floorDivided(by: 1_000_000)
    let zone = CalendarTimeZones.timeZone(self.zone, local: localZone)
    let converter = LocalTimeConverter(zone: zone, near: seconds)
    var search = ElapseSearch(
      event: self, converter: converter, fields: converter.fields(at: seconds),
      microsecond: Int(start - seconds * 1_000_000))
    switch search.run() {
    case .found:
      let elapse = search.converter.instant(normalizing: &search.fields)
      guard elapse >= 0 else { return .never }
      return .elapse(elapse * 1_000_000 + Int64(search.microsecond))
    case .none: return .never
    case .gaveUp: return .unresolved
    }
  }

  /// ``Next`` in microseconds since 1970.
  enum MicrosecondElapse: Hashable {
    case elapse(Int64)
    case never
    case unresolved
  }
}

/// systemd's `find_next`: moves the fields forward, field by field from the year down, to the
/// first that match, re-normalizing through `mktime` at each step as systemd does.
private struct ElapseSearch {
  let event: CalendarEvent
  var converter: LocalTimeConverter
  var fields: CivilTime
  var microsecond: Int

  /// systemd's safety valve against a search that does not converge.
  static let maximumIterations = 1000

  enum Outcome {
    case found
    case none
    case gaveUp
  }

  /// Whether a matching time was found, there is none, or no answer came in
  /// ``maximumIterations`` steps.
  mutating func run() -> Outcome {
    for _ in 0..<Self.maximumIterations {
      _ = converter.instant(normalizing: &fields)
      fields.isDST = -1

      var year = fields.year
      let yearMatch = match(event.years, &year)
      fields.year = year
      if yearMatch > 0 { resetBelowYear() }
      if yearMatch < 0 { return .none }
      if withinBounds() <= 0 { return .none }

      var month = fields.month0 + 1
      var result = match(event.months, &month)
      fields.month0 = month - 1
      if result > 0 { resetBelowMonth() }
      if outOfBounds(&result) {
        fields.year += 1
        resetBelowYear()
        continue
      }
      if result == 0 { continue }

      var day = fields.day
      result = match(event.days, &day, days: true)
      fields.day = day
      if result > 0 { resetTime() }
      if outOfBounds(&result) {
        fields.month0 += 1
        resetBelowMonth()
        continue
      }
      if result == 0 { continue }

      if !matchesWeekday() {
        fields.day += 1
        resetTime()
        continue
      }

      var hour = fields.hour
      result = match(event.hours, &hour)
      fields.hour = hour
      if result > 0 { resetBelowHour() }
      if outOfBounds(&result) {
        fields.day += 1
        resetTime()
        continue
      }
      if result == 0 { continue }

      var minute = fields.minute
      result = match(event.minutes, &minute)
      fields.minute = minute
      if result > 0 { resetBelowMinute() }
      if outOfBounds(&result) {
        fields.hour += 1
        resetBelowHour()
        continue
      }
      if result == 0 { continue }

      var second = fields.second * 1_000_000 + microsecond
      result = match(event.microseconds, &second)
      microsecond = second % 1_000_000
      fields.second = second / 1_000_000
      if outOfBounds(&result) {
        fields.minute += 1
        resetBelowMinute()
        continue
      }
      if result == 0 { continue }
      return .found
    }
    return .gaveUp
  }

  /// systemd's `r < 0 || (r = tm_within_bounds(…)) < 0`.
  private mutating func outOfBounds(_ result: inout Int) -> Bool {
    if result < 0 { return true }
    result = withinBounds()
    return result < 0
  }

  private mutating func resetBelowYear() {
    fields.month0 = 0
    resetBelowMonth()
  }

  private mutating func resetBelowMonth() {
    fields.day = 1
    resetTime()
  }

  private mutating func resetTime() {
    fields.hour = 0
    resetBelowHour()
  }

  private mutating func resetBelowHour() {
    fields.minute = 0
    resetBelowMinute()
  }

  private mutating func resetBelowMinute() {
    fields.second = 0
    microsecond = 0
  }

  /// systemd's `find_matching_component`: moves `value` to the least matching value at or
  /// after it. 1 moved, 0 already matching, -1 none left.
  private mutating func match(
    _ chain: [CalendarComponent]?, _ value: inout Int, days: Bool = false
  ) -> Int {
    guard let chain else { return 0 }
    var best: Int?
    for component in chain {
      var start = component.start
      var stop = component.stop
      if days && event.endOfMonth {
        start = endOfMonthDay(start)
        stop = endOfMonthDay(stop)
        if stop > 0 { swap(&start, &stop) }
      }
      if start >= value {
        if best == nil || start < best! { best = start }
      } else if component.repetition > 0 {
        let steps = (value - start + component.repetition - 1) / component.repetition
        let candidate = start + component.repetition * steps
        if (best == nil || candidate < best!) && (stop < 0 || candidate <= stop) {
          best = candidate
        }
      }
    }
    guard let best else { return -1 }
    defer { value = best }
    return value != best ? 1 : 0
  }

  /// systemd's `find_end_of_month`: the day `fromEnd - 1` days before this month's last, or -1.
  private mutating func endOfMonthDay(_ fromEnd: Int) -> Int {
    var probe = fields
    probe.month0 += 1
    probe.day = 1 - fromEnd
    _ = converter.instant(normalizing: &probe)
    return probe.month0 == fields.month0 ? probe.day : -1
  }

  /// systemd's `tm_within_bounds`: 1 when the fields are a real local time; 0 when `mktime`
  /// moved them forward (they are replaced by the moved ones, with the unit below the first
  /// that moved reset, so no elapse is skipped); -1 when it moved them backward or past the
  /// last year.
  private mutating func withinBounds() -> Int {
    guard fields.year <= CalendarEvent.maximumYear else { return -1 }
    var normalized = fields
    _ = converter.instant(normalizing: &normalized)
    guard
      let moved = (0..<6).first(where: {
        Self.unit($0, of: normalized) != Self.unit($0, of: fields)
      })
    else { return 1 }
    guard Self.unit(moved, of: normalized) > Self.unit(moved, of: fields) else { return -1 }
    // The unit below the one that moved starts again: month 0, day 1, hour, minute, second 0.
    switch moved {
    case 0: normalized.month0 = 0
    case 1: normalized.day = 1
    case 2: normalized.hour = 0
    case 3: normalized.minute = 0
    case 4: normalized.second = 0
    default: break
    }
    fields = normalized
    return 0
  }

  /// Year, month, day, hour, minute or second of `time` (0…5, largest first): a switch, not an
  /// array of key paths, whose lookups (`swift_getAtKeyPath`) were 5 % of a restart's CPU with
  /// 10,000 calendar jobs (`perf`), two thirds of this function's.
  private static func unit(_ index: Int, of time: CivilTime) -> Int {
    switch index {
    case 0: time.year
    case 1: time.month0
    case 2: time.day
    case 3: time.hour
    case 4: time.minute
    default: time.second
    }
  }

  private mutating func matchesWeekday() -> Bool {
    guard let weekdays = event.weekdays else { return true }
    var normalized = fields
    _ = converter.instant(normalizing: &normalized)
    return weekdays & (1 << normalized.weekdayFromMonday) != 0
  }
}
