import Foundation

/// Parses the human durations used in config files and flags: `500ms`, `30s`, `10m`, `4h`, `1d`,
/// and sums of them such as `1h30m`.
public enum DurationParser {
  /// Why a duration string was rejected.
  public struct InvalidDuration: Error, CustomStringConvertible, Equatable {
    /// The rejected text.
    public var text: String
    /// The text is a well-formed duration longer than ``DurationParser/maximum``.
    public var isTooLarge: Bool

    public init(text: String, isTooLarge: Bool = false) {
      self.text = text
      self.isTooLarge = isTooLarge
    }

    public var description: String {
      isTooLarge
        ? "duration \"\(text)\" is too large: the maximum is \(DurationParser.format(maximum))"
          + " (100 years)"
        : "invalid duration \"\(text)\": expected a number with a unit (ms, s, m, h, d), "
          + "e.g. 30s, 10m, 4h, 1d or 1h30m"
    }
  }

  /// The longest duration accepted (36500d, 100 years): every instant computed from it stays
  /// far inside the range of the store's nanosecond timestamps.
  public static let maximum: Duration = .seconds(36_500 * 86_400)

  private static let units: [(suffix: String, seconds: Double)] = [
    ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400),
  ]

  /// Parses `text` into a `Duration`; throws `InvalidDuration` for anything else.
  public static func parse(_ text: String) throws(InvalidDuration) -> Duration {
    // Foundation's trimming is costly next to the rest; a config with 1,000 jobs parses 1,000.
    let padded = text.first?.isWhitespace == true || text.last?.isWhitespace == true
    var rest = Substring(padded ? text.trimmingCharacters(in: .whitespaces) : text)
    guard !rest.isEmpty else { throw InvalidDuration(text: text) }
    var totalMilliseconds: Double = 0
    while !rest.isEmpty {
      let number = rest.prefix { $0.isNumber || $0 == "." }
      guard let value = Double(number) else { throw InvalidDuration(text: text) }
      rest = rest.dropFirst(number.count)
      let unitText = rest.prefix { $0.isLetter }
      guard let unit = units.first(where: { $0.suffix == unitText }) else {
        throw InvalidDuration(text: text)
      }
      rest = rest.dropFirst(unitText.count)
      totalMilliseconds += value * unit.seconds * 1000
    }
    let maximumMilliseconds = Double(maximum.components.seconds) * 1000
    guard totalMilliseconds.isFinite, totalMilliseconds <= maximumMilliseconds else {
      throw InvalidDuration(text: text, isTooLarge: true)
    }
    return .milliseconds(Int64(totalMilliseconds.rounded()))
  }

  /// Formats a duration the way `parse` reads it, using the largest exact units (`1h30m`).
  public static func format(_ duration: Duration) -> String {
    var milliseconds =
      duration.components.seconds * 1000
      + duration.components.attoseconds / 1_000_000_000_000_000
    if milliseconds == 0 { return "0s" }
    var text = ""
    for (suffix, seconds) in units.reversed() {
      let unitMilliseconds = Int64(seconds * 1000)
      let count = milliseconds / unitMilliseconds
      if count > 0 {
        text += "\(count)\(suffix)"
        milliseconds -= count * unitMilliseconds
      }
    }
    return text
  }
}
