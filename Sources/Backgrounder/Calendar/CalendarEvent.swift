import Foundation

/// A calendar event in systemd.time(7) syntax, such as `Mon..Fri *-*-* 02:00` or `weekly`,
/// parsed and normalized as systemd does; ``nextElapse(after:localZone:)`` gives the same
/// instants as systemd's `calendar_spec_next_usec` (`systemd-analyze calendar`).
public struct CalendarEvent: Hashable, Sendable, CustomStringConvertible {
  /// Where the wall-clock fields are read.
  public enum Zone: Hashable, Sendable {
    /// The machine's local time zone (following `TZ`), looked up when an elapse is computed.
    case local
    /// Coordinated Universal Time (`… UTC`).
    case utc
    /// A time zone of the system's tz database (`… Europe/Berlin`).
    case named(CalendarTimeZone)
  }

  /// Weekdays as bits (Monday = bit 0 … Sunday = bit 6), or nil for any day.
  public var weekdays: UInt8?
  /// Years, or nil for `*`.
  public var years: [CalendarComponent]?
  /// Months (1–12), or nil for `*`.
  public var months: [CalendarComponent]?
  /// Days of the month (1–31), counted from the month's end with ``endOfMonth``; nil for `*`.
  public var days: [CalendarComponent]?
  /// Whether ``days`` count back from the last day of the month (`~`).
  public var endOfMonth: Bool
  /// Hours, or nil for `*`.
  public var hours: [CalendarComponent]?
  /// Minutes, or nil for `*`.
  public var minutes: [CalendarComponent]?
  /// Seconds in microseconds (`*` is `0/1`).
  public var microseconds: [CalendarComponent]
  /// The time zone of the fields.
  public var zone: Zone

  /// The shortest repetition of the seconds field accepted, in microseconds: 1s. systemd
  /// takes down to 1µs (`*:*:0/0.000001`); a job due that often would run back to back, and
  /// each elapse costs a search, so a repetition shorter than this is refused.
  public static let shortestRepetition = 1_000_000

  /// Parses `expression` as systemd does, rejecting what systemd rejects and a repetition of
  /// the seconds shorter than ``shortestRepetition`` (1s).
  public init(_ expression: String) throws(CalendarEventError) {
    var parser = CalendarEventParser(expression)
    self = try parser.parse()
  }

  init(
    weekdays: UInt8?, years: [CalendarComponent]?, months: [CalendarComponent]?,
    days: [CalendarComponent]?, endOfMonth: Bool, hours: [CalendarComponent]?,
    minutes: [CalendarComponent]?, microseconds: [CalendarComponent], zone: Zone
  ) {
    self.weekdays = weekdays
    self.years = years
    self.months = months
    self.days = days
    self.endOfMonth = endOfMonth
    self.hours = hours
    self.minutes = minutes
    self.microseconds = microseconds
    self.zone = zone
  }

  /// The normalized form, as `systemd-analyze calendar` prints it.
  public var description: String { normalized }
}
