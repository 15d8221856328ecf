/// Bytes that crossed a metered link, counted at one instant (a run's end, or a reading while
/// it goes on).
public struct MeteredUsageRecord: Hashable, Sendable, Codable {
  /// When the bytes were counted.
  public var at: WallInstant
  /// Bytes sent and received on metered links.
  public var bytes: Int64

  /// Creates a record.
  public init(at: WallInstant, bytes: Int64) {
    self.at = at
    self.bytes = bytes
  }
}

/// Where a ``MeteredBudget`` stands at one instant.
public struct MeteredBudgetStanding: Hashable, Sendable {
  /// The budget.
  public var budget: MeteredBudget
  /// Metered bytes counted in the current window.
  public var used: Int64
  /// Where the current window starts (records at or before it no longer count).
  public var windowStart: WallInstant
  /// The next instant some of ``used`` stops counting (the oldest record leaves a trailing
  /// window; a monthly window resets), or `nil` when nothing is counted.
  public var freesAt: WallInstant?
  /// How many bytes stop counting at ``freesAt``.
  public var freesBytes: Int64

  /// Whether the budget is spent: nothing more may cross a metered link.
  public var isSpent: Bool { used >= budget.bytes }
  /// Bytes left before it is spent (0 when spent).
  public var left: Int64 { max(0, budget.bytes - used) }
  /// Percent of the budget used (may be over 100).
  public var percentUsed: Int64 { used * 100 / max(budget.bytes, 1) }
}

extension MeteredBudget {
  /// The current window at `now`: records after `start` and at or before `now` count. `end`
  /// is when a monthly window resets (nil for a trailing one, which slides).
  public func window(at now: WallInstant, zone: CalendarTimeZone) -> (
    start: WallInstant, end: WallInstant?
  ) {
    switch window {
    case .trailing(let seconds):
      return (now.advanced(by: .seconds(-seconds)), nil)
    case .monthly(let day):
      let nowSeconds = now.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
      let local = LocalTimeConverter(zone: zone, near: nowSeconds).fields(at: nowSeconds)
      var year = local.year
      var month = local.month0 + 1
      var start = Self.reset(day: day, year: year, month: month, zone: zone)
      if start > now {
        (year, month) = month == 1 ? (year - 1, 12) : (year, month - 1)
        start = Self.reset(day: day, year: year, month: month, zone: zone)
      }
      let (nextYear, nextMonth) = month == 12 ? (year + 1, 1) : (year, month + 1)
      return (start, Self.reset(day: day, year: nextYear, month: nextMonth, zone: zone))
    }
  }

  /// Local midnight starting `day` of the month (its last day when shorter), as `mktime`
  /// reads it: a midnight in a daylight-saving gap moves past the gap.
  static func reset(day: Int, year: Int, month: Int, zone: CalendarTimeZone) -> WallInstant {
    let (nextYear, nextMonth) = month == 12 ? (year + 1, 1) : (year, month + 1)
    let daysInMonth =
      CivilTime.days(year: nextYear, month: nextMonth, day: 1)
      - CivilTime.days(year: year, month: month, day: 1)
    return zone.instant(
      year: year, month: month, day: min(day, daysInMonth), hour: 0, minute: 0, second: 0)
  }

  /// Where this budget stands at `now` given the `records` (in any order; those after `now`
  /// are ignored).
  public func standing(
    of records: [MeteredUsageRecord], at now: WallInstant, zone: CalendarTimeZone
  ) -> MeteredBudgetStanding {
    let (start, end) = window(at: now, zone: zone)
    let counted = records.filter { $0.at > start && $0.at <= now && $0.bytes > 0 }
    let used = counted.reduce(Int64(0)) { $0.addingReportingOverflow($1.bytes).partialValue }
    var freesAt: WallInstant?
    var freesBytes: Int64 = 0
    if !counted.isEmpty {
      switch window {
      case .trailing(let seconds):
        let oldest = counted.map(\.at).min()!
        freesAt = oldest.advanced(by: .seconds(seconds))
        freesBytes = counted.filter { $0.at == oldest }.reduce(0) { $0 + $1.bytes }
      case .monthly:
        freesAt = end
        freesBytes = used
      }
    }
    return MeteredBudgetStanding(
      budget: self, used: used, windowStart: start, freesAt: freesAt, freesBytes: freesBytes)
  }

  /// Records that can no longer count at `now` or later (before the longest window this
  /// budget may look back over), which a store may delete.
  public func expiry(at now: WallInstant, zone: CalendarTimeZone) -> WallInstant {
    window(at: now, zone: zone).start
  }
}
