import Foundation
import SystemCalls

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
    // A regular file (not a directory of the database) that starts as a TZif file does.
    return (try? readSmallFile(databaseDirectory + name, limit: 4)) == Array("TZif".utf8)
  }

  /// The machine's local zone as glibc reads it: `TZ` (a tz database name with or without a
  /// leading `:`, an absolute path to a TZif file, or empty for UTC) when set and readable,
  /// else `/etc/localtime`, else UTC. `environment`: the variables to read `TZ` from (nil: the
  /// process's, by `getenv`, without copying the whole environment).
  public static func local(environment: [String: String]? = nil) -> CalendarTimeZone {
    let variable = environment.map { $0["TZ"] } ?? getenv("TZ").map { String(cString: $0) }
    if var name = variable {
      if name.hasPrefix(":") { name.removeFirst() }
      if name.isEmpty { return .utc }
      if name.hasPrefix("/") {
        if let bytes = tzif(at: name),
          let zone = CalendarTimeZone(identifier: zoneName(ofPath: name), tzif: bytes)
        {
          return zone
        }
      } else if let zone = CalendarTimeZone(identifier: name) {
        return zone
      }
    }
    let path = "/etc/localtime"
    guard let bytes = tzif(at: path),
      let zone = CalendarTimeZone(identifier: zoneName(ofPath: path), tzif: bytes)
    else { return .utc }
    return zone
  }

  /// The bytes of the TZif file at `path` (at most 1 MiB; the tz database's largest is 4 KB),
  /// or nil when it cannot be read.
  static func tzif(at path: String) -> [UInt8]? {
    try? readSmallFile(path, limit: 1 << 20)
  }

  /// `Europe/Berlin` for a path into the tz database (through symlinks), else the path.
  /// `realpath(3)`, not `URL.resolvingSymlinksInPath()`: that one made a one-shot `calendar`
  /// instantiate generic types it does not otherwise use (3 % of its CPU).
  private static func zoneName(ofPath path: String) -> String {
    guard let real = realpath(path, nil) else { return path }
    defer { free(real) }
    let resolved = String(cString: real)
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
