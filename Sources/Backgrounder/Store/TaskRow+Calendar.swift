import Foundation

/// How the `windows` and `calendar` columns of the `task` table hold a task's time windows and
/// calendar schedule.
extension TaskRow {
  /// The calendar as stored: events in normal form (parsed again when read), the splay and
  /// catch-up. The local zone is not stored: it is the runtime's when the row is loaded.
  private struct StoredCalendar: Codable {
    var events: [String]
    var randomDelay: Int64
    var fixedMachineId: String?
    var splaySeed: UInt64?
    var jobId: String
    var catchUp: Bool
    var windows: [String]
  }

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

  /// The calendar as JSON.
  static func encode(_ schedule: CalendarSchedule) -> String {
    let (machineId, seed, jobId): (String?, UInt64?, String) =
      switch schedule.splay {
      case .fixed(let machineId, let jobId): (machineId, nil, jobId)
      case .perElapse(let seed, let jobId): (nil, seed, jobId)
      }
    let stored = StoredCalendar(
      events: schedule.events.map(\.normalized), randomDelay: schedule.randomDelay.nanoseconds,
      fixedMachineId: machineId, splaySeed: seed, jobId: jobId, catchUp: schedule.catchUp,
      windows: schedule.windows.map(\.description))
    let data = (try? JSONEncoder().encode(stored)) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }

  /// The calendar `text` holds (as ``encode(_:)-(CalendarSchedule)`` writes it), nil if it is
  /// not valid; its local zone is UTC until the dispatcher loads it into its own zone.
  static func decodeCalendar(_ text: String) -> CalendarSchedule? {
    guard let stored = try? JSONDecoder().decode(StoredCalendar.self, from: Data(text.utf8))
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
      randomDelay: .nanoseconds(stored.randomDelay),
      splay: splay, catchUp: stored.catchUp)
  }
}
