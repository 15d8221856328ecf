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
      Expressions use the systemd.time(7) calendar-event syntax, e.g. "Mon..Fri *-*-* 02:00",
      "*-*~1 03:00 Europe/Berlin" or "weekly". Times are local (following TZ) unless the
      expression ends in UTC or a time zone name. Exits with status 1 if any expression is
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

  @Flag(help: "Print JSON: [{\"expression\", \"normalized\", \"next\": [ISO 8601 …]}].")
  var json = false

  private struct Entry: Encodable {
    var expression: String
    var normalized: String
    var next: [String]
  }

  func validate() throws {
    guard iterations >= 1 else { throw ValidationError("--iterations must be at least 1") }
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
    for expression in expressions {
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
          printHuman(expression, event, elapses, localZone: localZone)
        }
      } catch {
        Output.error("\(error)")
        failed = true
      }
    }
    if json { try Output.jsonLine(entries) }
    if failed { throw ExitCode(1) }
  }

  private func printHuman(
    _ expression: String, _ event: CalendarEvent, _ elapses: [WallInstant],
    localZone: CalendarTimeZone
  ) {
    var lines: [String] = []
    if expression != event.normalized { lines.append("  Original form: \(expression)") }
    lines.append("Normalized form: \(event.normalized)")
    if elapses.isEmpty { lines.append("    Next elapse: never") }
    for (index, elapse) in elapses.enumerated() {
      let label = index == 0 ? "    Next elapse" : "       Iter. #\(index + 1)"
      lines.append("\(label): \(CalendarTimeFormat.human(elapse, in: localZone))")
      if localZone.identifier != "UTC" {
        lines.append("       (in UTC): \(CalendarTimeFormat.human(elapse, in: nil))")
      }
    }
    Output.line(lines.joined(separator: "\n") + "\n")
  }
}
