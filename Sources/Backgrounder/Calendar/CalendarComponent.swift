/// One element of a calendar-event field (systemd.time(7)): a value, a range `a..b`, a
/// repetition `a/n` or `a..b/n`. Seconds are held in microseconds.
public struct CalendarComponent: Hashable, Sendable, Comparable {
  /// The first value.
  public var start: Int
  /// The last value of a range, or -1 when there is none.
  public var stop: Int
  /// The step between values, or 0 for a single value.
  public var repetition: Int

  /// Creates a component.
  public init(start: Int, stop: Int = -1, repetition: Int = 0) {
    self.start = start
    self.stop = stop
    self.repetition = repetition
  }

  /// Orders by start, then stop, then repetition (as systemd sorts a field's list).
  public static func < (lhs: CalendarComponent, rhs: CalendarComponent) -> Bool {
    (lhs.start, lhs.stop, lhs.repetition) < (rhs.start, rhs.stop, rhs.repetition)
  }
}

extension [CalendarComponent] {
  /// systemd's normalization: a range's stop trimmed to a whole number of steps, a range or
  /// repetition that cannot repeat made a single value, the list sorted and without duplicates.
  func normalizedChain() -> [CalendarComponent] {
    let trimmed = map { component in
      var component = component
      if component.stop > component.start && component.repetition > 0 {
        component.stop -= (component.stop - component.start) % component.repetition
      }
      if (component.stop > component.start && component.repetition > 0
        && component.start + component.repetition > component.stop)
        || component.start == component.stop
      {
        component.stop = -1
        component.repetition = 0
      }
      return component
    }
    var result: [CalendarComponent] = []
    for component in trimmed.sorted() where result.last != component {
      result.append(component)
    }
    return result
  }

  /// Whether every component lies in `from...to` and can repeat at least once inside it.
  /// Counted from the month's end, systemd lowers the bound by 3 days for each component in
  /// turn (28 for the first, 25 for the second, …): so does this.
  func isValid(from: Int, to upper: Int, endOfMonth: Bool) -> Bool {
    var to = upper
    for component in self {
      if endOfMonth { to -= 3 }
      guard component.start >= from, component.start <= to, component.repetition <= to - from
      else { return false }
      if component.stop >= 0 {
        guard component.stop >= from, component.stop <= to,
          component.start + component.repetition <= component.stop
        else { return false }
      } else if endOfMonth {
        guard component.start - component.repetition >= from else { return false }
      } else {
        guard component.start + component.repetition <= to else { return false }
      }
    }
    return true
  }
}
