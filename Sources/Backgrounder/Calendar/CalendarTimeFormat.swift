import Foundation

/// Calendar times as the `calendar` command, `doctor` and `status` print them.
public enum CalendarTimeFormat {
  /// ISO 8601 with the zone's offset: `2024-03-31T03:00:00+02:00` (microseconds when not whole).
  public static func iso8601(_ instant: WallInstant, in zone: CalendarTimeZone) -> String {
    let (fields, offset, microseconds) = parts(instant, zone)
    let fraction = microseconds > 0 ? "." + pad(microseconds, 6) : ""
    return "\(pad(fields.year, 4))-\(pad(fields.month0 + 1, 2))-\(pad(fields.day, 2))T"
      + "\(pad(fields.hour, 2)):\(pad(fields.minute, 2)):\(pad(fields.second, 2))\(fraction)"
      + offsetText(offset, separator: ":")
  }

  /// As `systemd-analyze` writes times, with the zone's abbreviation: `Sun 2024-03-31 03:00:00
  /// CEST` (`UTC` for UTC, nil `zone`).
  public static func human(_ instant: WallInstant, in zone: CalendarTimeZone?) -> String {
    let (fields, _, _) = parts(instant, zone)
    let seconds = instant.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
    let weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][fields.weekdayFromMonday]
    return "\(weekday) \(pad(fields.year, 4))-\(pad(fields.month0 + 1, 2))-\(pad(fields.day, 2)) "
      + "\(pad(fields.hour, 2)):\(pad(fields.minute, 2)):\(pad(fields.second, 2)) "
      + (zone?.abbreviation(atSeconds: seconds) ?? "UTC")
  }

  /// A short local form for status lines: `Tue 22:00`.
  public static func weekdayAndTime(_ instant: WallInstant, in zone: CalendarTimeZone) -> String {
    let (fields, _, _) = parts(instant, zone)
    let weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][fields.weekdayFromMonday]
    return "\(weekday) \(pad(fields.hour, 2)):\(pad(fields.minute, 2))"
  }

  private static func parts(
    _ instant: WallInstant, _ zone: CalendarTimeZone?
  ) -> (CivilTime, Int, Int) {
    let seconds = instant.nanosecondsSince1970.floorDivided(by: 1_000_000_000)
    let microseconds = Int((instant.nanosecondsSince1970 - seconds * 1_000_000_000) / 1000)
    let offset = zone?.offset(atSeconds: seconds) ?? 0
    return (CivilTime(utcSeconds: seconds + Int64(offset)), offset, microseconds)
  }

  private static func offsetText(_ offset: Int, separator: String) -> String {
    let magnitude = abs(offset)
    return (offset < 0 ? "-" : "+") + pad(magnitude / 3600, 2) + separator
      + pad(magnitude / 60 % 60, 2)
  }

  private static func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}
