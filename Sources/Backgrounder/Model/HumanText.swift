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
    // Rounded as integers, not with `String(format:)` (Foundation's formatter was 1 % of the
    // daemon's CPU per run, for the `run finished` line), to the same text.
    if magnitude < 1 {
      let hundredths = rounded(magnitude, times: 100)
      let fraction = hundredths % 100
      return sign + "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
    if magnitude < 10 {
      let tenths = rounded(magnitude, times: 10)
      return sign + "\(tenths / 10)" + (tenths % 10 == 0 ? "" : ".\(tenths % 10)") + " s"
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

  /// `value × scale` (both positive, the product below 1,000) rounded to an integer as `printf`
  /// rounds `value`'s exact binary value: to nearest, an exact tie to even. The product's own
  /// rounding error (`fma`) decides what looks like a tie: 0.015 is stored as 0.01499…, so
  /// 1.5 in hundredths is less than a half.
  private static func rounded(_ value: Double, times scale: Double) -> Int {
    let product = value * scale
    let error = (-product).addingProduct(value, scale)
    let whole = product.rounded(.down)
    let fraction = product - whole
    let up =
      fraction != 0.5 ? fraction > 0.5 : error != 0 ? error > 0 : Int(whole) % 2 != 0
    return Int(whole) + (up ? 1 : 0)
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
