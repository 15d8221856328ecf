import ArgumentParser
import Backgrounder
import Foundation

/// `backgrounder calendar EXPR…`: normalize calendar expressions and show their next elapses,
/// as `systemd-analyze calendar` does (the same instants).
struct CalendarCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "calendar",
    abstract: "Show the normalized form and next elapses of calendar expressions.",
    discussion: """
      Expressions use the systemd.time(7) calendar-event syntax, e.g. "Mon..Fri *-*-* 02:00", \
      "*-*~1 03:00 Europe/Berlin" or "weekly". Times are local (following TZ) unless the \
      expression ends in UTC or a time zone name. Exits with status 1 if any expression is \
      invalid (each is named on stderr).
      """
  )

  @Argument(help: ArgumentHelp("Calendar expressions.", valueName: "expression"))
  var expressions: [String]

  @Option(help: ArgumentHelp("How many elapses to show for each expression.", valueName: "n"))
  var iterations = 1

  @Option(
    help: ArgumentHelp(
      "The time to start from: @EPOCH or 'YYYY-MM-DD HH:MM[:SS] [ZONE]' (default: now).",
      valueName: "time"))
  var baseTime: String?

  /// Accepted as by every verb, so that one `--config` can be passed to any of them; the
  /// calendar syntax depends on no config, so the file is not read.
  @Option(name: .long, help: .hidden)
  var config: String?

  @Flag(help: "Print JSON: [{\"expression\", \"normalized\", \"next\": [ISO 8601 …]}].")
  var json = false

  func validate() throws {
    guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
  }

  func run() throws {
    try request.run()
  }

  /// What the parsed arguments ask for.
  var request: CalendarRequest {
    CalendarRequest(
      expressions: expressions, iterations: iterations, baseTime: baseTime, config: config,
      json: json)
  }

  /// One expression's block in `systemd-analyze calendar`'s layout, line for line: the
  /// original form when it differs, the normalized form, then per elapse its local time (zone
  /// abbreviation), the time in UTC unless the local zone is UTC, and how far from now it is
  /// (from the real now, as systemd's "From now", also with --base-time).
  static func humanBlock(
    _ expression: String, _ event: CalendarEvent, _ elapses: [WallInstant],
    localZone: CalendarTimeZone, now: WallInstant
  ) -> [String] {
    var lines: [String] = []
    if expression != event.normalized { lines.append("  Original form: \(expression)") }
    lines.append("Normalized form: \(event.normalized)")
    if elapses.isEmpty { lines.append("    Next elapse: never") }
    for (index, elapse) in elapses.enumerated() {
      let label = index == 0 ? "    Next elapse" : "       Iter. #\(index + 1)"
      lines.append("\(label): \(CalendarTimeFormat.human(elapse, in: localZone))")
      if !localZone.isUTC {
        lines.append("       (in UTC): \(CalendarTimeFormat.human(elapse, in: nil))")
      }
      let microseconds = (elapse.nanosecondsSince1970 - now.nanosecondsSince1970) / 1000
      lines.append("       From now: \(SystemdRelativeTime.text(microseconds: microseconds))")
    }
    return lines
  }
}

/// What `calendar` was asked for, as plain values: run from the parsed command or, for a plain
/// line, without the argument parser's property wrappers (``CalendarCommand/plainRequest(_:)``).
struct CalendarRequest: Equatable {
  var expressions: [String]
  var iterations = 1
  var baseTime: String?
  var config: String?
  var json = false

  private struct Entry: Encodable {
    var expression: String
    var normalized: String
    var next: [String]
  }

  func run() throws {
    let localZone = CalendarTimeZones.local()
    let base: WallInstant
    do {
      base =
        try baseTime.map { try CalendarBaseTime.parse($0, localZone: localZone) }
        ?? WallInstant(Date())
    } catch {
      throw ValidationError("--base-time: \(error)")
    }
    var entries: [Entry] = []
    var failed = false
    for (index, expression) in expressions.enumerated() {
      // As systemd-analyze: a blank line after each expression's block but the last, also
      // after one that is invalid (its error goes to stderr).
      defer { if !json, index < expressions.count - 1 { Output.line("") } }
      do {
        let event = try CalendarEvent(expression)
        let elapses = event.elapses(after: base, count: iterations, localZone: localZone)
        let zone = event.timeZone(localZone: localZone)
        if json {
          entries.append(
            Entry(
              expression: expression, normalized: event.normalized,
              next: elapses.map { CalendarTimeFormat.iso8601($0, in: zone) }))
        } else {
          Output.line(
            CalendarCommand.humanBlock(
              expression, event, elapses, localZone: localZone, now: WallInstant(Date())
            ).joined(separator: "\n"))
        }
      } catch {
        Output.error("\(error)")
        failed = true
      }
    }
    if json { try Output.jsonLine(entries) }
    if failed { throw ExitCode(1) }
  }
}

/// How systemd words a time relative to now (`format_timestamp_relative`): "1 day 4h left",
/// "2h 58min left", "5min 3s ago", "now".
enum SystemdRelativeTime {
  /// `microseconds` from now to the time (negative: in the past).
  static func text(microseconds: Int64) -> String {
    let (second, minute, hour, day): (Int64, Int64, Int64, Int64) = (
      1_000_000, 60_000_000, 3_600_000_000, 86_400_000_000
    )
    let (week, month, year) = (7 * day, 2_629_800 * second, 31_557_600 * second)
    let suffix = microseconds < 0 ? "ago" : "left"
    let d = microseconds.magnitude > Int64.max.magnitude ? Int64.max : abs(microseconds)
    func plural(_ value: Int64, _ one: String, _ many: String) -> String {
      "\(value) \(value == 1 ? one : many)"
    }
    return switch d {
    case year...:
      "\(plural(d / year, "year", "years")) \(plural(d % year / month, "month", "months")) \(suffix)"
    case month...:
      "\(plural(d / month, "month", "months")) \(plural(d % month / day, "day", "days")) \(suffix)"
    case week...:
      "\(plural(d / week, "week", "weeks")) \(plural(d % week / day, "day", "days")) \(suffix)"
    case (2 * day)...: "\(d / day) days \(suffix)"
    case (25 * hour)...: "1 day \((d - day) / hour)h \(suffix)"
    case (6 * hour)...: "\(d / hour)h \(suffix)"
    case hour...: "\(d / hour)h \(d % hour / minute)min \(suffix)"
    case (5 * minute)...: "\(d / minute)min \(suffix)"
    case minute...: "\(d / minute)min \(d % minute / second)s \(suffix)"
    case second...: "\(d / second)s \(suffix)"
    case 1_000...: "\(d / 1_000)ms \(suffix)"
    case 1...: "\(d)us \(suffix)"
    default: "now"
    }
  }
}

extension CalendarCommand {
  /// `arguments` (after the verb) as the argument parser would read them, when each is an
  /// expression, `--json`, or `--iterations`, `--base-time` or `--config` followed by its value,
  /// none given twice and no expression or value looking like an option; else nil (the whole
  /// tree parses them, for its messages). Linear in the count: the argument parser removes each
  /// used argument by a search from the first, taken in a hash set's order, so its time grows
  /// with the square of the count (10,000 expressions: seconds).
  static func plainRequest(_ arguments: ArraySlice<String>) -> CalendarRequest? {
    var expressions: [String] = []
    var json = false
    var iterations: Int?
    var baseTime: String?
    var config: String?
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if !argument.hasPrefix("-") {
        expressions.append(argument)
        continue
      }
      switch argument {
      case "--json" where !json: json = true
      case "--iterations", "--base-time", "--config":
        guard let value = arguments.optionValue(at: &index) else { return nil }
        switch argument {
        case "--iterations" where iterations == nil:
          guard let count = Int(value), count >= 1 else { return nil }
          iterations = count
        case "--base-time" where baseTime == nil: baseTime = value
        case "--config" where config == nil: config = value
        default: return nil
        }
      default: return nil
      }
    }
    guard !expressions.isEmpty else { return nil }
    // No `CalendarCommand()`: its property wrappers' definitions cost more than this parse.
    return CalendarRequest(
      expressions: expressions, iterations: iterations ?? 1, baseTime: baseTime, config: config,
      json: json)
  }
}
