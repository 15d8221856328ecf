import Foundation

/// How the `blockedOn` column holds a ``MeteredBudgetWait``:
/// `budget:SCOPE|BYTES|WINDOW|USED|FREES_AT|FREES_BYTES`, WINDOW `1d`, `12h` or `monthly-1`,
/// FREES_AT seconds since 1970 or empty.
/// The `task.meteredBudget` column holds a request's ``MeteredBudget`` as `BYTES|WINDOW`.
enum MeteredBudgetWaitCoding {
  static func encode(_ budget: MeteredBudget) -> String {
    "\(budget.bytes)|\(window(budget.window))"
  }

  static func decodeBudget(_ text: Substring) -> MeteredBudget? {
    let fields = text.split(separator: "|", omittingEmptySubsequences: false)
    guard fields.count == 2, let bytes = Int64(fields[0]), bytes > 0,
      let parsed = window(fields[1])
    else { return nil }
    return MeteredBudget(bytes: bytes, window: parsed)
  }

  private static func window(_ window: MeteredBudget.Window) -> String {
    switch window {
    case .trailing(let seconds): "\(seconds)s"
    case .monthly(let day): "monthly-\(day)"
    }
  }

  private static func window(_ text: Substring) -> MeteredBudget.Window? {
    if text.hasPrefix("monthly-"), let day = Int(text.dropFirst(8)), (1...31).contains(day) {
      return .monthly(day: day)
    }
    if text.hasSuffix("s"), let seconds = Int64(text.dropLast()), seconds > 0 {
      return .trailing(seconds: seconds)
    }
    return nil
  }

  static func encode(_ wait: MeteredBudgetWait) -> String {
    let windowText = window(wait.budget.window)
    let freesAt = wait.freesAt.map { "\(Int64($0.timeIntervalSince1970.rounded(.down)))" } ?? ""
    return "budget:"
      + [
        wait.scope.rawValue, "\(wait.budget.bytes)", windowText, "\(wait.used)", freesAt,
        "\(wait.freesBytes)",
      ].joined(separator: "|")
  }

  static func decode(_ item: Substring) -> MeteredBudgetWait? {
    guard item.hasPrefix("budget:") else { return nil }
    let fields = item.dropFirst(7).split(separator: "|", omittingEmptySubsequences: false)
    guard fields.count == 6, let scope = MeteredBudgetWait.Scope(rawValue: String(fields[0])),
      let bytes = Int64(fields[1]), let used = Int64(fields[3]),
      let freesBytes = Int64(fields[5])
    else { return nil }
    guard let parsed = window(fields[2]) else { return nil }
    var freesAt: Date?
    if !fields[4].isEmpty {
      guard let seconds = Int64(fields[4]) else { return nil }
      freesAt = Date(timeIntervalSince1970: TimeInterval(seconds))
    }
    return MeteredBudgetWait(
      scope: scope, budget: MeteredBudget(bytes: bytes, window: parsed), used: used,
      freesAt: freesAt, freesBytes: freesBytes)
  }
}
