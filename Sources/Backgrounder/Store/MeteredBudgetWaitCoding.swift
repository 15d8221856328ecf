import Foundation

/// How the `blockedOn` column holds a ``MeteredBudgetWait``:
/// `budget:SCOPE|BYTES|WINDOW|USED|FREES_AT|FREES_BYTES`, WINDOW `1d`, `12h` or `monthly-1`,
/// FREES_AT seconds since 1970 or empty.
enum MeteredBudgetWaitCoding {
  static func encode(_ wait: MeteredBudgetWait) -> String {
    let window =
      switch wait.budget.window {
      case .trailing(let seconds): "\(seconds)s"
      case .monthly(let day): "monthly-\(day)"
      }
    let freesAt = wait.freesAt.map { "\(Int64($0.timeIntervalSince1970.rounded(.down)))" } ?? ""
    return "budget:"
      + [
        wait.scope.rawValue, "\(wait.budget.bytes)", window, "\(wait.used)", freesAt,
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
    let window: MeteredBudget.Window
    if fields[2].hasPrefix("monthly-"), let day = Int(fields[2].dropFirst(8)) {
      window = .monthly(day: day)
    } else if fields[2].hasSuffix("s"), let seconds = Int64(fields[2].dropLast()) {
      window = .trailing(seconds: seconds)
    } else {
      return nil
    }
    var freesAt: Date?
    if !fields[4].isEmpty {
      guard let seconds = Int64(fields[4]) else { return nil }
      freesAt = Date(timeIntervalSince1970: TimeInterval(seconds))
    }
    return MeteredBudgetWait(
      scope: scope, budget: MeteredBudget(bytes: bytes, window: window), used: used,
      freesAt: freesAt, freesBytes: freesBytes)
  }
}
