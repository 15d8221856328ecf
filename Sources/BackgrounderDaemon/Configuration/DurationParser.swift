import Foundation

/// Parses the human durations used in config files and flags: `500ms`, `30s`, `10m`, `4h`, `1d`,
/// and sums of them such as `1h30m`.
package enum DurationParser {
  /// Why a duration string was rejected.
  package struct InvalidDuration: Error, CustomStringConvertible, Equatable {
    /// The rejected text.
    package var text: String
    /// The text is a well-formed duration longer than ``DurationParser/maximum``.
    package var isTooLarge: Bool

    package init(text: String, isTooLarge: Bool = false) {
      self.text = text
      self.isTooLarge = isTooLarge
    }

    package var description: String {
      isTooLarge
        ? "duration \"\(text)\" is too large: the maximum is \(DurationParser.format(maximum))"
          + " (100 years)"
        : "invalid duration \"\(text)\": expected a number with a unit (ms, s, m, h, d), "
          + "e.g. 30s, 10m, 4h, 1d or 1h30m"
    }
  }

  /// The longest duration accepted (36500d, 100 years): every instant computed from it stays
  /// far inside the range of the store's nanosecond timestamps.
  package static let maximum: Duration = .seconds(36_500 * 86_400)

  private static let units: [(suffix: String, seconds: Double)] = [
    ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400),
  ]

  /// Parses `text` into a `Duration`; throws `InvalidDuration` for anything else.
  package static func parse(_ text: String) throws(InvalidDuration) -> Duration {
    if let milliseconds = plainMilliseconds(text) {
      return try checked(milliseconds, text: text)
    }
    // Foundation's trimming is costly next to the rest; a config with 1,000 jobs parses 4,000.
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
    return try checked(totalMilliseconds, text: text)
  }

  private static func checked(
    _ totalMilliseconds: Double, text: String
  ) throws(InvalidDuration) -> Duration {
    let maximumMilliseconds = Double(maximum.components.seconds) * 1000
    guard totalMilliseconds.isFinite, totalMilliseconds <= maximumMilliseconds else {
      throw InvalidDuration(text: text, isTooLarge: true)
    }
    return .milliseconds(Int64(totalMilliseconds.rounded()))
  }

  /// The common case read from the UTF-8 bytes: whole numbers of 1–15 digits (exact in a
  /// `Double`), each followed by a unit, nothing else. Nil for anything else (fractions,
  /// blanks, other characters, malformed text), which the general path reads or rejects; for
  /// text this accepts, the general path computes the same sum in the same order.
  private static func plainMilliseconds(_ text: String) -> Double? {
    let utf8 = text.utf8
    var total: Double = 0
    var index = utf8.startIndex
    while index != utf8.endIndex {
      let numberStart = index
      var number: Int64 = 0
      while index != utf8.endIndex, case let byte = utf8[index],
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
      {
        number = number &* 10 &+ Int64(byte - UInt8(ascii: "0"))
        index = utf8.index(after: index)
      }
      let digits = utf8.distance(from: numberStart, to: index)
      let unitStart = index
      while index != utf8.endIndex, case let byte = utf8[index] | 0x20,
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
      {
        index = utf8.index(after: index)
      }
      let unitText = utf8[unitStart..<index]
      guard (1...15).contains(digits),
        let unit = units.first(where: { $0.suffix.utf8.elementsEqual(unitText) })
      else { return nil }
      total += Double(number) * unit.seconds * 1000
    }
    return utf8.isEmpty ? nil : total
  }

  /// Formats a duration the way `parse` reads it, using the largest exact units (`1h30m`).
  package static func format(_ duration: Duration) -> String {
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
