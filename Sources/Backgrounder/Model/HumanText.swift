import Foundation

/// How values are worded for people: the one formatter of every human line the runtime, the
/// daemon and the `backgrounder` command print (reasons, `status`, `status --watch`,
/// `history`, `logs`, `doctor`). Never a Swift debug description: JSON output keeps the raw
/// values.
public enum HumanText {
  /// `0.43 s`, `1.2 s`, `42 s`, `4 min 12 s`, `2 h 5 min`, `3 d 4 h`.
  public static func duration(seconds: Double) -> String {
    guard seconds.isFinite else { return "-" }
    let sign = seconds < 0 ? "-" : ""
    let magnitude = abs(seconds)
    if magnitude < 1 { return sign + String(format: "%.2f s", magnitude) }
    if magnitude < 10 {
      let text = String(format: "%.1f", magnitude)
      return sign + (text.hasSuffix(".0") ? String(text.dropLast(2)) : text) + " s"
    }
    let whole = Int(magnitude.rounded())
    let text =
      switch whole {
      case ..<60: "\(whole) s"
      case ..<3600: whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
      case ..<86_400:
        whole % 3600 / 60 == 0 ? "\(whole / 3600) h" : "\(whole / 3600) h \(whole % 3600 / 60) min"
      default:
        whole % 86_400 / 3600 == 0
          ? "\(whole / 86_400) d" : "\(whole / 86_400) d \(whole % 86_400 / 3600) h"
      }
    return sign + text
  }

  /// As ``duration(seconds:)``.
  public static func duration(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return self.duration(seconds: Double(seconds) + Double(attoseconds) / 1e18)
  }

  /// A worker's result: `success`, `failure: disk full`, `retry`, `retry: server busy`.
  public static func result(_ result: WorkResult) -> String {
    switch result {
    case .success: "success"
    case .failure(let reason): outcome("failure", reason: reason)
    case .retry(let reason): outcome("retry", reason: reason)
    }
  }

  /// `outcome: reason`, or the outcome alone without a reason.
  public static func outcome(_ outcome: String, reason: String?) -> String {
    guard let reason, !reason.isEmpty else { return outcome }
    return "\(outcome): \(reason)"
  }

  /// A point in time in `zone` (default: the local zone, following TZ), as systemd prints
  /// one: `Sat 2026-11-28 02:10:00 CET`.
  public static func time(_ date: Date, in zone: CalendarTimeZone? = nil) -> String {
    CalendarTimeFormat.human(WallInstant(date), in: zone ?? localZone)
  }

  /// The local zone of ``time(_:in:)``, read once.
  private static let localZone = CalendarTimeZones.local()

  /// The first line of `text`, cut to at most `limit` characters at a word boundary, `…`
  /// marking a cut (a single word longer than the limit is cut inside it).
  public static func truncated(_ text: String, to limit: Int) -> String {
    let firstLine = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
    let cutLine = firstLine.count < text.count
    guard firstLine.count > limit || cutLine else { return String(firstLine) }
    guard firstLine.count > limit else { return firstLine + " …" }
    guard limit > 1 else { return "…" }
    // The longest run of whole words of at most `limit - 1` characters: cut at the last blank
    // among the first `limit` characters.
    let room = firstLine.prefix(limit)
    if let space = room.lastIndex(where: \.isWhitespace), space > room.startIndex {
      return room[..<space].trimmingCharacters(in: .whitespaces) + "…"
    }
    return firstLine.prefix(limit - 1) + "…"
  }
}
