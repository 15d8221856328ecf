import Foundation
import GRDB

/// How the `windows` and `calendar` columns of the `task` table hold a task's time windows and
/// calendar schedule.
extension TaskRow {
  /// `22:00-06:00;Sat,Sun 08:00-20:00`: the windows in normal form, `;`-separated.
  static func encode(_ windows: [TimeWindow]) -> String {
    windows.map(\.description).joined(separator: ";")
  }

  /// The windows `text` holds (as ``encode(_:)-([TimeWindow])`` writes them); nil if one is
  /// invalid.
  static func decodeWindows(_ text: String) -> [TimeWindow]? {
    var windows: [TimeWindow] = []
    for item in text.split(separator: ";") {
      guard let window = try? TimeWindow(String(item)) else { return nil }
      windows.append(window)
    }
    return windows
  }

  /// The calendar as lines of `key value`: `event` (normal form, parsed again when read) and
  /// `window` once per item, in order, then `random-delay` (nanoseconds), `fixed-machine-id` or
  /// `splay-seed`, `job` and `catch-up`. A value's `\` and newline are written `\\` and `\n`.
  /// The local zone is not stored: it is the runtime's when the row is loaded.
  ///
  /// Lines, not JSON: a restart reads every row's calendar, and with 10,000 jobs the JSON
  /// decoder took 11 % of the restart's CPU (`perf record`, `Benchmarks/CalendarJobs`); stores
  /// written before are converted by the migration `calendar-as-lines`.
  static func encode(_ schedule: CalendarSchedule) -> String {
    var lines: [String] = []
    for event in schedule.events { lines.append("event " + escaped(event.normalized)) }
    for window in schedule.windows { lines.append("window " + escaped(window.description)) }
    lines.append("random-delay \(schedule.randomDelay.nanoseconds)")
    switch schedule.splay {
    case .fixed(let machineId, let jobId):
      lines.append("fixed-machine-id " + escaped(machineId))
      lines.append("job " + escaped(jobId))
    case .perElapse(let seed, let jobId):
      lines.append("splay-seed \(seed)")
      lines.append("job " + escaped(jobId))
    }
    lines.append("catch-up \(schedule.catchUp)")
    return lines.joined(separator: "\n")
  }

  /// The calendar `text` holds (as ``encode(_:)-(CalendarSchedule)`` writes it, or as JSON, the
  /// form before `calendar-as-lines`, which a reader may still meet in a store whose daemon has
  /// not migrated it yet), nil if it is not valid; its local zone is UTC until the dispatcher
  /// loads it into its own zone.
  static func decodeCalendar(_ text: String) -> CalendarSchedule? {
    if text.utf8.first == UInt8(ascii: "{") { return decodeCalendarJSON(text) }
    var events: [CalendarEvent] = []
    var windows: [TimeWindow] = []
    var randomDelay: Int64?
    var machineId: String?
    var seed: UInt64?
    var jobId: String?
    var catchUp: Bool?
    // Split as bytes: `split` by `Character` took half the decoding's time.
    for line in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
      let value = unescaped(Substring(line[line.index(after: space)...]))
      switch Substring(line[..<space]) {
      case "event":
        guard let event = try? CalendarEvent(value) else { return nil }
        events.append(event)
      case "window":
        guard let window = try? TimeWindow(value) else { return nil }
        windows.append(window)
      case "random-delay": randomDelay = Int64(value)
      case "fixed-machine-id": machineId = value
      case "splay-seed": seed = UInt64(value)
      case "job": jobId = value
      case "catch-up": catchUp = Bool(value)
      default: return nil
      }
    }
    guard let randomDelay, let jobId, let catchUp, (machineId == nil) != (seed == nil) else {
      return nil
    }
    let splay: CalendarSchedule.Splay =
      if let machineId { .fixed(machineId: machineId, jobId: jobId) } else {
        .perElapse(seed: seed ?? 0, jobId: jobId)
      }
    return CalendarSchedule(
      events: events, localZone: .utc, windows: windows, randomDelay: .nanoseconds(randomDelay),
      splay: splay, catchUp: catchUp)
  }

  private static func escaped(_ value: String) -> String {
    guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\n") })
    else { return value }
    return value.replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\n", with: "\\n")
  }

  private static func unescaped(_ value: Substring) -> String {
    guard value.utf8.contains(UInt8(ascii: "\\")) else { return String(value) }
    var result = ""
    var escaping = false
    for character in value {
      if escaping {
        result.append(character == "n" ? "\n" : character)
        escaping = false
      } else if character == "\\" {
        escaping = true
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// The calendar as JSON, the form of the `calendar` column before `calendar-as-lines`.
  private struct StoredCalendarJSON: Decodable {
    var events: [String]
    var randomDelay: Int64
    var fixedMachineId: String?
    var splaySeed: UInt64?
    var jobId: String
    var catchUp: Bool
    var windows: [String]
  }

  private static func decodeCalendarJSON(_ text: String) -> CalendarSchedule? {
    guard let stored = try? JSONDecoder().decode(StoredCalendarJSON.self, from: Data(text.utf8))
    else { return nil }
    var events: [CalendarEvent] = []
    for event in stored.events {
      guard let parsed = try? CalendarEvent(event) else { return nil }
      events.append(parsed)
    }
    var windows: [TimeWindow] = []
    for window in stored.windows {
      guard let parsed = try? TimeWindow(window) else { return nil }
      windows.append(parsed)
    }
    let splay: CalendarSchedule.Splay =
      if let machineId = stored.fixedMachineId {
        .fixed(machineId: machineId, jobId: stored.jobId)
      } else {
        .perElapse(seed: stored.splaySeed ?? 0, jobId: stored.jobId)
      }
    return CalendarSchedule(
      events: events, localZone: .utc, windows: windows,
      randomDelay: .nanoseconds(stored.randomDelay), splay: splay, catchUp: stored.catchUp)
  }

  /// Rewrites every `calendar` column held as JSON as lines (migration `calendar-as-lines`).
  /// One that does not decode is left as it is: reading its row reports it corrupt, naming it.
  static func convertCalendarsToLines(_ db: Database) throws {
    let rows = try Row.fetchAll(
      db, sql: "SELECT id, calendar FROM task WHERE calendar LIKE '{%'")
    for row in rows {
      let id: String = row["id"]
      let text: String = row["calendar"]
      guard let schedule = decodeCalendarJSON(text) else { continue }
      try db.execute(
        sql: "UPDATE task SET calendar = ? WHERE id = ?", arguments: [encode(schedule), id])
    }
  }
}
