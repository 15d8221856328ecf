import Foundation

/// Time zones for calendar events, from the system's tz database.
public enum CalendarTimeZones {
  /// The tz database directory systemd checks names against.
  public static let databaseDirectory = "/usr/share/zoneinfo/"

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
    return true
  }

  /// The machine's local zone as glibc reads it: `TZ` (a tz database name with or without a
  /// leading `:`, an absolute path to a TZif file, or empty for UTC) when set and readable,
  /// else `/etc/localtime`, else UTC.
  public static func local(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> CalendarTimeZone {
    if var name = environment["TZ"] {
      if name.hasPrefix(":") { name.removeFirst() }
      if name.isEmpty { return .utc }
      if name.hasPrefix("/") {
        if let data = FileManager.default.contents(atPath: name),
          let zone = CalendarTimeZone(identifier: zoneName(ofPath: name), tzif: [UInt8](data))
        {
          return zone
        }
      } else if let zone = CalendarTimeZone(identifier: name) {
        return zone
      }
    }
    let path = "/etc/localtime"
    guard let data = FileManager.default.contents(atPath: path),
      let zone = CalendarTimeZone(identifier: zoneName(ofPath: path), tzif: [UInt8](data))
    else { return .utc }
    return zone
  }

  /// `Europe/Berlin` for a path into the tz database (through symlinks), else the path.
  private static func zoneName(ofPath path: String) -> String {
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    guard let range = resolved.range(of: "/zoneinfo/") else { return path }
    return String(resolved[range.upperBound...])
  }

  /// The zone of `zone` (`.local` is `local`), or nil for UTC.
  static func timeZone(_ zone: CalendarEvent.Zone, local: CalendarTimeZone) -> CalendarTimeZone? {
    switch zone {
    case .utc: nil
    case .local: local
    case .named(let named): named
    }
  }
}

extension CalendarEvent {
  /// The zone this event's times are read in: its own (`UTC`, a tz name) or `localZone`.
  public func timeZone(localZone: CalendarTimeZone = CalendarTimeZones.local()) -> CalendarTimeZone
  {
    CalendarTimeZones.timeZone(zone, local: localZone) ?? .utc
  }
}
