import Foundation

/// Finds the line on which a key of a TOML document was written, so that errors found after
/// parsing (unknown keys, bad values, duplicate ids) can name a line.
///
/// It understands the subset the config format uses: `[table]`, `[[array-of-tables]]`,
/// `key = value` and inline tables, whose inner keys resolve to the line of the outer key.
///
/// The source is only scanned when a line is asked for: a valid config (every `status` reads
/// one) never pays for it.
struct KeyLocator {
  private let source: String

  init(source: String) {
    self.source = source
  }

  /// The line of `path` (like `job[1].backoff.policy`), or of its nearest written parent.
  func line(of path: String) -> Int? {
    let lines = Self.lines(of: source)
    var candidate = Substring(path)
    while !candidate.isEmpty {
      if let line = lines[String(candidate)] { return line }
      guard let cut = candidate.lastIndex(of: ".") else { break }
      candidate = candidate[..<cut]
    }
    return nil
  }

  /// The first line of every table and key path written in `source`.
  private static func lines(of source: String) -> [String: Int] {
    var lines: [String: Int] = [:]
    var section = ""
    var arrayCounts: [String: Int] = [:]
    for (offset, rawLine) in source.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      let number = offset + 1
      if line.hasPrefix("[[") {
        let name = Self.bare(line.dropFirst(2).prefix { $0 != "]" })
        let index = arrayCounts[name, default: 0]
        arrayCounts[name] = index + 1
        section = "\(name)[\(index)]"
        lines[section] = number
      } else if line.hasPrefix("[") {
        section = Self.bare(line.dropFirst().prefix { $0 != "]" })
        lines[section] = number
      } else if let equals = line.firstIndex(of: "="), !line.hasPrefix("#") {
        let key = Self.bare(line[..<equals])
        let path = section.isEmpty ? key : "\(section).\(key)"
        if lines[path] == nil { lines[path] = number }
      }
    }
    return lines
  }

  private static func bare(_ text: Substring) -> String {
    text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "")
  }
}
