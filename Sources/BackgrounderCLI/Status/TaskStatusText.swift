import Backgrounder
import Foundation

/// Human-readable rendering of the tasks section of `backgrounder status`.
enum TaskStatusText {
  /// A table: id, kind, state, next run (relative), attempt, last result, what it waits for.
  /// The last result is cut at a word boundary to ``lastResultWidth`` characters unless `wide`.
  static func report(
    _ tasks: [TaskStatus], storePath: String, now: Date, wide: Bool = false
  ) -> [String] {
    guard !tasks.isEmpty else { return ["Tasks: none (store \(storePath))"] }
    let header = ["ID", "KIND", "STATE", "NEXT RUN", "ATTEMPT", "LAST RESULT", "WAITING FOR"]
    // Each cell as the terminal will show it (controls as visible escapes, a tab as a space),
    // so that the columns are measured on what is printed.
    let rows = tasks.map { task in
      [
        task.id.rawValue, task.kind.rawValue,
        state(task, now: now) + (task.inhibitor.map { " (\($0.rawValue) lock)" } ?? ""),
        task.nextRun.map { relative($0, now: now) } ?? "-",
        "\(task.attempt)" + (task.deferrals > 0 ? " (+\(task.deferrals) deferred)" : ""),
        lastResult(task, wide: wide),
        waitingFor(task.pendingPredicates, now: now) + relaxing(task, now: now),
      ].map { TerminalText.escaped($0.replacingOccurrences(of: "\t", with: " ")) }
    }
    let widths = header.indices.map { column in
      ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    let format = { (cells: [String]) -> String in
      zip(cells, widths).map { cell, width in
        cell + String(repeating: " ", count: max(0, width - cell.count))
      }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }
    return ["Tasks (store \(storePath)):", "  " + format(header)] + rows.map { "  " + format($0) }
  }

  /// The state as shown: `paused (metered network) since 12:03` for a paused run, else
  /// ``TaskStatus/displayedState``.
  static func state(_ task: TaskStatus, now: Date) -> String {
    guard task.isPaused, let since = task.pausedSince else { return task.displayedState }
    let reason = task.pauseReason.map { " (\($0.lostCondition))" } ?? ""
    return "paused\(reason) since \(clockTime(since, now: now))"
  }

  /// The width of the LAST RESULT column without `--wide`.
  static let lastResultWidth = 60

  /// "success", "failure: exit status 3", "retry: deferred (network)", or "-": the first line,
  /// cut at a word boundary with `…` unless `wide` (then every line, joined by " / ").
  static func lastResult(_ task: TaskStatus, wide: Bool = false) -> String {
    guard let result = task.lastResult else { return "-" }
    let text = HumanText.outcome(result.rawValue, reason: task.lastReason)
    if wide {
      return text.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: " / ")
    }
    return HumanText.truncated(text, to: lastResultWidth)
  }

  /// What a task waits for, in words: "unmetered network, charger, backoff until 14:02".
  static func waitingFor(_ predicates: [PendingPredicate], now: Date) -> String {
    guard !predicates.isEmpty else { return "-" }
    return predicates.map { predicate in
      switch predicate {
      case .networkRequired(.unmetered): "unmetered network"
      case .networkRequired(.notRoaming): NetworkRequirement.notRoamingPhrase(nil)
      case .notRoaming(let unknown): NetworkRequirement.notRoamingPhrase(unknown)
      case .networkRequired: "network"
      case .workingInternet(let connectivity): "working internet (\(connectivity.waitingPhrase))"
      case .requiresCharging: "charger"
      case .requiresBatteryNotLow: "battery not low"
      case .waitingForBackoff(let until): "backoff until \(clockTime(until, now: now))"
      case .waitingForEarliestBeginDate(let at): "start time \(clockTime(at, now: now))"
      case .workerNotRegistered: "a registered worker"
      case .waitingForWindow(let opens):
        "window opens \(CalendarTimeFormat.weekdayAndTime(WallInstant(opens), in: localZone))"
      case .wifiNetwork(let allowed, let current):
        "Wi-Fi network \(allowed.joined(separator: ", ")) (now: \(current ?? "not on Wi-Fi"))"
      case .networkInterface(let allowed, let current):
        "interface \(allowed.joined(separator: ", ")) (now: \(current ?? "none"))"
      case .mounted(let path): "\(path) to be mounted"
      case .reachable(let destination, let failure):
        "\(destination) to be reachable (\(failure?.phrase ?? "not checked yet"))"
      case .meteredBudget(let wait): wait.phrase { clockTime($0, now: now) }
      case .userIdle(let required, let idleSince, let unknown):
        PendingPredicate.userIdlePhrase(
          required: required, idleSince: idleSince, unknown: unknown, now: now)
      }
    }.joined(separator: ", ")
  }

  /// When a waiting task's conditions relax (`relax-after`): ", relaxes in 2d 3h" (nothing
  /// while it runs or waits for nothing), or ", relaxed" once they have.
  static func relaxing(_ task: TaskStatus, now: Date) -> String {
    guard let at = task.relaxesAt, !task.pendingPredicates.isEmpty else { return "" }
    return at <= now ? ", relaxed" : ", relaxes \(relative(at, now: now))"
  }

  /// The zone window openings are shown in.
  private static let localZone = CalendarTimeZones.local()

  /// "in 3h 59m", "2m ago", "now".
  static func relative(_ date: Date, now: Date) -> String {
    let seconds = Int(date.timeIntervalSince(now).rounded())
    if abs(seconds) < 1 { return "now" }
    let magnitude = abs(seconds)
    let text =
      switch magnitude {
      case ..<60: "\(magnitude)s"
      case ..<3600: "\(magnitude / 60)m"
      case ..<86_400: "\(magnitude / 3600)h \(magnitude % 3600 / 60)m"
      default: "\(magnitude / 86_400)d \(magnitude % 86_400 / 3600)h"
      }
    return seconds > 0 ? "in \(text)" : "\(text) ago"
  }

  /// Local 24-hour wall-clock time: "14:02" today, "2026-11-23 14:02" otherwise.
  static func clockTime(_ date: Date, now: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.dateFormat =
      Calendar.current.isDate(date, inSameDayAs: now) ? "HH:mm" : "yyyy-MM-dd HH:mm"
    return formatter.string(from: date)
  }
}
