import Foundation

/// Time zones for calendar events, from the system's tz database through Foundation.
public enum CalendarTimeZones {
  /// The tz database directory systemd checks names against.
  static let databaseDirectory = "/usr/share/zoneinfo/"

  /// Whether `name` is a zone systemd accepts after an expression: `UTC`, or a relative path of
  /// letters, digits, `-_+` and single slashes naming a tz database file (magic `TZif`).
  public static func isValidName(_ name: String) -> Bool {
    if name == "UTC" { return true }
    guard !name.isEmpty, !name.hasPrefix("/"), !name.hasSuffix("/"), !name.contains("//"),
      name.utf8.allSatisfy({ byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
          || (byte >= 0x61 && byte <= 0x7A) || "-_+/".utf8.contains(byte)
      })
    else { return false }
    let path = databaseDirectory + name
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
      !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path)
    else { return false }
    defer { try? handle.close() }
    guard let magic = try? handle.read(upToCount: 4), magic == Data("TZif".utf8) else {
      return false
    }
    return TimeZone(identifier: name) != nil
  }

  /// The machine's local zone as glibc reads it: `TZ` (with or without a leading `:`; empty
  /// means UTC) when set and known to the tz database, else the system's zone.
  public static func local(environment: [String: String] = ProcessInfo.processInfo.environment)
    -> TimeZone
  {
    if var name = environment["TZ"] {
      if name.hasPrefix(":") { name.removeFirst() }
      if name.isEmpty { return TimeZone(identifier: "UTC") ?? .gmt }
      if name.hasPrefix(databaseDirectory) { name.removeFirst(databaseDirectory.count) }
      if let zone = TimeZone(identifier: name) { return zone }
    }
    return TimeZone.current
  }

  /// The zone of `zone` (`.local` read from `local`), or nil for UTC.
  static func timeZone(_ zone: CalendarEvent.Zone, local: TimeZone) -> TimeZone? {
    switch zone {
    case .utc: nil
    case .local: local
    case .named(let name): TimeZone(identifier: name)
    }
  }
}

extension CalendarEvent {
  /// The zone this event's times are read in: its own (`UTC`, a tz name) or `localZone`.
  public func timeZone(localZone: TimeZone = CalendarTimeZones.local()) -> TimeZone {
    CalendarTimeZones.timeZone(zone, local: localZone) ?? TimeZone(identifier: "UTC") ?? .gmt
  }
}
