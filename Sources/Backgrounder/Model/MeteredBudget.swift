/// How many bytes may cross metered links in a window: `200MB/1d` (a job's `metered-budget`),
/// `2GB/30d` or `2GB` with `reset = "monthly:1"` (the daemon's `[network] metered-budget`).
///
/// Units are decimal: 1 KB = 1,000 bytes, 1 MB = 1,000,000 bytes, 1 GB = 1,000,000,000 bytes.
public struct MeteredBudget: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The window the bytes are counted over.
  public enum Window: Hashable, Sendable, Codable {
    /// The trailing `seconds` before now (`/12h`, `/1d`, `/30d`).
    case trailing(seconds: Int64)
    /// Since the last local midnight starting day `day` (1–31) of a month; a day past a
    /// month's end is that month's last day (day 31 resets on 30 April and 28/29 February).
    case monthly(day: Int)
  }

  /// The bytes the window allows.
  public var bytes: Int64
  /// The window.
  public var window: Window

  /// Creates a budget.
  public init(bytes: Int64, window: Window) {
    self.bytes = bytes
    self.window = window
  }

  /// The longest trailing window accepted (a year).
  public static let longestTrailingSeconds: Int64 = 366 * 86_400

  /// Parses `AMOUNT UNIT[/WINDOW]`: AMOUNT a number (a decimal fraction allowed), UNIT `KB`,
  /// `MB` or `GB` (decimal), WINDOW `h`, `d`, `Nh` or `Nd` (a trailing window). Without
  /// `requireWindow`, the window may be left out (`monthlyDay` then gives it).
  public init(
    parsing text: String, requireWindow: Bool = true, monthlyDay: Int? = nil
  ) throws(MeteredBudgetError) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count) else {
      throw MeteredBudgetError(text, "expected AMOUNT/WINDOW such as \"200MB/1d\"")
    }
    bytes = try Self.amount(parts[0], text)
    if parts.count == 2 {
      if monthlyDay != nil {
        throw MeteredBudgetError(
          text, "a budget that resets monthly takes no trailing window: write the amount only")
      }
      window = .trailing(seconds: try Self.window(parts[1], text))
    } else if let monthlyDay {
      window = .monthly(day: monthlyDay)
    } else if requireWindow {
      throw MeteredBudgetError(
        text, "missing the window: add \"/h\", \"/1d\" or \"/30d\" (as in \"200MB/1d\")")
    } else {
      throw MeteredBudgetError(
        text, "missing the window: add \"/30d\" or set `reset = \"monthly:DAY\"`")
    }
  }

  /// Parses a `reset` value, `monthly:DAY` with DAY 1–31, into the day.
  public static func monthlyResetDay(parsing text: String) throws(MeteredBudgetError) -> Int {
    guard text.hasPrefix("monthly:"), let day = Int(text.dropFirst("monthly:".count)),
      (1...31).contains(day)
    else {
      throw MeteredBudgetError(
        text, "expected \"monthly:DAY\" with DAY from 1 to 31, such as \"monthly:1\"")
    }
    return day
  }

  private static func amount(_ text: Substring, _ whole: String) throws(MeteredBudgetError)
    -> Int64
  {
    let units: [(String, Int64)] = [
      ("KB", 1000), ("kB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000),
    ]
    guard let (unit, scale) = units.first(where: { text.hasSuffix($0.0) }) else {
      throw MeteredBudgetError(
        whole, "the amount needs a unit: KB, MB or GB (decimal: 1 MB = 1,000,000 bytes)")
    }
    let number = text.dropLast(unit.count).trimmingSpaces
    let pieces = number.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(pieces.count), pieces.allSatisfy({ !$0.isEmpty && $0.count <= 12 }),
      pieces.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
      let whole64 = Int64(pieces[0])
    else {
      throw MeteredBudgetError(whole, "\"\(number)\" is not a number of \(unit)")
    }
    var value = whole64 * scale
    if pieces.count == 2 {
      var fractionScale = scale
      for digit in pieces[1] {
        fractionScale /= 10
        value += Int64(String(digit))! * fractionScale
      }
    }
    guard value > 0 else { throw MeteredBudgetError(whole, "the amount must be more than 0") }
    guard value <= 1_000_000 * 1_000_000_000 else {
      throw MeteredBudgetError(whole, "the amount must be at most 1000000 GB")
    }
    return value
  }

  private static func window(_ text: Substring, _ whole: String) throws(MeteredBudgetError)
    -> Int64
  {
    let unit: Int64
    switch text.last {
    case "h": unit = 3600
    case "d": unit = 86_400
    default:
      throw MeteredBudgetError(
        whole, "the window is hours or days: \"h\", \"12h\", \"1d\", \"30d\"")
    }
    let count = text.dropLast()
    guard count.isEmpty || count.allSatisfy({ $0.isASCII && $0.isNumber }),
      let number = count.isEmpty ? 1 : Int64(count), number > 0
    else {
      throw MeteredBudgetError(whole, "\"\(text)\" is not a window such as \"12h\" or \"30d\"")
    }
    guard number <= longestTrailingSeconds / unit else {
      throw MeteredBudgetError(whole, "the window must be at most 366 days")
    }
    return number * unit
  }

  /// `200 MB/1d`, `2 GB/30d`, `2 GB/month (resets on day 1)`.
  public var description: String {
    let amount = Self.byteText(bytes)
    switch window {
    case .trailing(let seconds):
      if seconds % 86_400 == 0 { return "\(amount)/\(seconds / 86_400)d" }
      return "\(amount)/\(seconds / 3600)h"
    case .monthly(let day):
      return "\(amount)/month (resets on day \(day))"
    }
  }

  /// The window as written in `status` JSON: `1d`, `12h`, `monthly:1`.
  public var windowText: String {
    switch window {
    case .trailing(let seconds):
      seconds % 86_400 == 0 ? "\(seconds / 86_400)d" : "\(seconds / 3600)h"
    case .monthly(let day): "monthly:\(day)"
    }
  }

  /// Bytes in decimal units, as people read them: `212 MB`, `1.5 GB`, `600 KB`, `12 B`.
  public static func byteText(_ bytes: Int64) -> String {
    let units: [(String, Int64)] = [("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000)]
    for (unit, scale) in units where bytes >= scale {
      let tenths = (bytes * 10 + scale / 2) / scale
      if tenths % 10 == 0 || tenths >= 1000 { return "\((bytes + scale / 2) / scale) \(unit)" }
      return "\(tenths / 10).\(tenths % 10) \(unit)"
    }
    return "\(bytes) B"
  }
}

/// A `metered-budget` or `reset` value that does not parse.
public struct MeteredBudgetError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The text given.
  public var text: String
  /// What is wrong with it.
  public var reason: String

  init(_ text: String, _ reason: String) {
    self.text = text
    self.reason = reason
  }

  /// `"200XB/1d": the amount needs a unit …`.
  public var description: String { "\"\(text)\": \(reason)" }
}

extension Substring {
  fileprivate var trimmingSpaces: Substring {
    var text = self
    while text.last == " " { text = text.dropLast() }
    return text
  }
}
