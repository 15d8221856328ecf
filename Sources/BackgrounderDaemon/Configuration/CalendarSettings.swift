import Backgrounder

/// A job's calendar keys: `calendar`, `window`, `window-end`, `random-delay`,
/// `fixed-random-delay` and `catch-up` (the systemd timer settings `OnCalendar=`,
/// `RandomizedDelaySec=`, `FixedRandomDelay=` and `Persistent=`, plus time windows).
package struct CalendarSettings: Sendable, Equatable {
  /// `window-end`: what happens to a run still going when its window closes.
  package enum WindowEnd: String, Sendable, Equatable, CaseIterable {
    /// The run goes on.
    case `continue`
    /// The run is stopped and retried in the next window, without using an attempt.
    case stop
  }

  /// `calendar = "…"` or a list: the job is due at every elapse of any of them.
  package var calendars: [CalendarEvent] = []
  /// `window = "22:00-06:00"` or a list: a due run starts only inside one of them.
  package var windows: [TimeWindow] = []
  package var windowEnd = WindowEnd.continue
  /// `random-delay = "30m"`: each elapse is delayed by up to this much.
  package var randomDelay: Duration = .zero
  /// `fixed-random-delay = true`: that delay is fixed by `/etc/machine-id` and the job id.
  package var fixedRandomDelay = false
  /// `catch-up = false`: an elapse missed while the daemon was not running is skipped instead
  /// of run once at start.
  package var catchUp = true
  /// The keys that were written, in the order of ``CalendarSettingsReader/keys``.
  package var keysWritten: [String] = []

  package init() {}
}

/// Reads and checks a `[[job]]` table's calendar keys.
enum CalendarSettingsReader {
  static let keys = [
    "calendar", "window", "window-end", "random-delay", "fixed-random-delay", "catch-up",
  ]

  /// The calendar settings of `job`, or nil when it has none of the keys.
  static func read(_ job: TableReader) throws(ConfigurationError) -> CalendarSettings? {
    var settings = CalendarSettings()
    settings.keysWritten = keys.filter(job.contains)
    guard !settings.keysWritten.isEmpty else { return nil }
    if let calendars = try job.stringOrStringArray("calendar") {
      for (index, expression) in calendars.enumerated() {
        do {
          settings.calendars.append(try CalendarEvent(expression))
        } catch {
          throw job.error(element("calendar", index, of: calendars), error.description)
        }
      }
      for key in ["every", "once"] where job.contains(key) {
        throw job.error(key, "a job has one schedule: `calendar`, `every` or `once = true`")
      }
    }
    if let windows = try job.stringOrStringArray("window") {
      for (index, text) in windows.enumerated() {
        do {
          settings.windows.append(try TimeWindow(text))
        } catch {
          throw job.error(
            element("window", index, of: windows), "invalid window '\(text)': \(error.reason)")
        }
      }
    }
    if let end = try job.string("window-end") {
      guard let value = CalendarSettings.WindowEnd(rawValue: end) else {
        throw job.error("window-end", "expected \"continue\" or \"stop\", got \"\(end)\"")
      }
      guard !settings.windows.isEmpty else {
        throw job.error("window-end", "only jobs with a `window` take `window-end`")
      }
      settings.windowEnd = value
    }
    try readSplay(job, into: &settings)
    return settings
  }

  private static func readSplay(
    _ job: TableReader, into settings: inout CalendarSettings
  ) throws(ConfigurationError) {
    for key in ["random-delay", "fixed-random-delay", "catch-up"]
    where job.contains(key) && settings.calendars.isEmpty {
      throw job.error(key, "only calendar jobs (`calendar = \"…\"`) take `\(key)`")
    }
    if let delay = try job.duration("random-delay") {
      guard delay >= .zero else { throw job.error("random-delay", "must not be negative") }
      settings.randomDelay = delay
    }
    settings.fixedRandomDelay = try job.bool("fixed-random-delay") ?? false
    if settings.fixedRandomDelay && settings.randomDelay == .zero {
      throw job.error("fixed-random-delay", "needs a `random-delay` to fix")
    }
    settings.catchUp = try job.bool("catch-up") ?? true
  }

  /// `key` for a single string, `key[index]` for an element of a list.
  private static func element(_ key: String, _ index: Int, of values: [String]) -> String {
    values.count == 1 ? key : "\(key)[\(index)]"
  }
}
