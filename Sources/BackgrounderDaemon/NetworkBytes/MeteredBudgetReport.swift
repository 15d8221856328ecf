import Backgrounder
import Foundation

/// The daemon's `[network] metered-budget` as `status` shows it (top-level `"meteredBudget"`
/// in `status --json`), whenever one is set: the metered bytes of all jobs in the current
/// window, the budget, what is left, and when bytes stop counting.
package struct MeteredBudgetReport: Sendable, Equatable, Codable {
  /// The budget's bytes.
  package var budget: Int64
  /// Metered bytes counted in the current window (runs in flight included).
  package var used: Int64
  /// Bytes left before it is spent (0 when spent).
  package var left: Int64
  /// Percent of the budget used (may be over 100).
  package var percentUsed: Int64
  /// Whether it is spent: every job needing the network waits for an unmetered link.
  package var spent: Bool
  /// The window as written in the config: `30d`, `12h`, `monthly:1`.
  package var window: String
  /// A trailing window: when the oldest counted bytes leave it (RFC 3339); nil when nothing
  /// is counted, and for a monthly window (see ``resetsAt``).
  package var freesAt: String?
  /// How many bytes stop counting at ``freesAt``.
  package var freesBytes: Int64?
  /// A monthly window: when it resets (RFC 3339).
  package var resetsAt: String?

  /// The report of `standing`; `resetsAt`: the end of a monthly window.
  package init(_ standing: MeteredBudgetStanding, resetsAt: WallInstant?) {
    budget = standing.budget.bytes
    used = standing.used
    left = standing.left
    percentUsed = standing.percentUsed
    spent = standing.isSpent
    window = standing.budget.windowText
    if case .trailing = standing.budget.window, let frees = standing.freesAt {
      freesAt = ISO8601.string(frees.date)
      freesBytes = standing.freesBytes
    }
    self.resetsAt = resetsAt.map { ISO8601.string($0.date) }
  }

  /// `2 GB/30d`, `2 GB/month (resets on day 1)`: the budget as the config reads.
  package var budgetText: String {
    let amount = MeteredBudget.byteText(budget)
    if window.hasPrefix("monthly:") {
      return "\(amount)/month (resets on day \(window.dropFirst("monthly:".count)))"
    }
    return "\(amount)/\(window)"
  }

  /// `Metered budget (all jobs): 1.2 MB of 10 MB/30d used (12 %), 8.8 MB left; 1.2 MB frees
  /// at 09:12`, with `time` formatting the RFC 3339 times.
  package func line(time: (Date) -> String) -> String {
    var text =
      "Metered budget (all jobs): \(MeteredBudget.byteText(used)) of \(budgetText) used "
      + "(\(percentUsed) %), \(MeteredBudget.byteText(left)) left"
    if spent { text += "; spent: jobs needing the network wait for an unmetered link" }
    if let freesAt, let date = Self.date(freesAt), let freesBytes, freesBytes > 0 {
      text += "; \(MeteredBudget.byteText(freesBytes)) frees at \(time(date))"
    }
    if let resetsAt, let date = Self.date(resetsAt) { text += "; resets at \(time(date))" }
    return text
  }

  private static func date(_ text: String) -> Date? {
    try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
