import TOML

/// Reads typed values out of one TOML table, remembering which keys were read so that the rest
/// can be reported as unknown, and turning every problem into a `ConfigurationError` that names
/// the line the key was written on.
struct TableReader {
  let table: TOMLTable
  /// Dotted path of this table (`""` for the document, `job[0]`, `job[0].backoff`).
  let path: String
  let file: String
  /// The id of the `[[job]]` this table is (or is in), when it is a string.
  var jobId: String? = nil
  /// Where problems that need not stop the reading (unknown keys) go; without it they throw.
  var problems: ConfigurationProblems? = nil

  func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  func error(_ key: String?, _ message: String) -> ConfigurationError {
    let full = key.map(keyPath) ?? (path.isEmpty ? nil : path)
    return ConfigurationError(
      file: file, line: key.map(line(of:)) ?? tableLine, key: full, message: message, job: jobId)
  }

  /// The line this table was defined on; none for the document itself.
  private var tableLine: Int? { path.isEmpty ? nil : table.position.line }

  /// The line of `key` relative to this table (`every`, `backoff.initial`, `command[1]`), or of
  /// its nearest written parent.
  private func line(of key: String) -> Int? {
    var current = table
    var line = tableLine
    for part in key.split(separator: ".") {
      var name = part
      var element: Int?
      if part.hasSuffix("]"), let bracket = part.lastIndex(of: "[") {
        name = part[..<bracket]
        element = Int(part[part.index(after: bracket)..<part.index(before: part.endIndex)])
      }
      guard let entry = current.entry(String(name)) else { break }
      var node = entry.node
      line = entry.keyPosition.line
      if let element, let elements = node.value.array, elements.indices.contains(element) {
        node = elements[element]
        line = node.position.line
      }
      guard let inner = node.value.table else { break }
      line = inner.position.line
      current = inner
    }
    return line
  }

  /// Reports every key of this table that is not in `known`, each with the nearest known key
  /// ("did you mean `random-delay`?"), or the list of all when none is close: recorded in
  /// ``problems`` (the reading goes on) when there is one, else thrown together. A linear
  /// search: `known` is a handful of short keys, cheaper to compare than to hash.
  func rejectUnknownKeys(_ known: [String]) throws(ConfigurationError) {
    let unknown = table.entries.map(\.key).filter { !known.contains($0) }
    guard !unknown.isEmpty else { return }
    let errors = unknown.map { key in
      let message =
        switch KeySuggestion.nearest(to: key, in: known) {
        case let near where near.isEmpty:
          "unknown key; expected one of: \(known.sorted().joined(separator: ", "))"
        case let near:
          "unknown key; did you mean \(near.map { "`\($0)`" }.joined(separator: " or "))?"
        }
      return error(key, message)
    }
    if let problems {
      errors.forEach(problems.record)
      return
    }
    var first = errors[0]
    first.others = Array(errors.dropFirst())
    throw first
  }

  func contains(_ key: String) -> Bool { table[key] != nil }

  func string(_ key: String) throws(ConfigurationError) -> String? {
    guard let value = table[key] else { return nil }
    guard let string = value.string else { throw mismatch(key, "a string", value) }
    return try withoutNUL(string, key)
  }

  /// `string`, refused when it holds a NUL (`"\u0000"` in TOML): every string of the config
  /// ends up in an argv, a path, an environment variable or a header, where the C string
  /// would silently end at the NUL.
  private func withoutNUL(_ string: String, _ key: String) throws(ConfigurationError) -> String {
    guard !string.utf8.contains(0) else {
      throw error(key, "must not contain NUL (\\u0000): the value would be cut short there")
    }
    return string
  }

  func bool(_ key: String) throws(ConfigurationError) -> Bool? {
    guard let value = table[key] else { return nil }
    guard let bool = value.boolean else { throw mismatch(key, "true or false", value) }
    return bool
  }

  func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
    guard let value = table[key] else { return nil }
    guard let int = value.integer.map(Int.init) else { throw mismatch(key, "an integer", value) }
    guard range.contains(int) else {
      throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(int)")
    }
    return int
  }

  func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
    guard let value = table[key] else { return nil }
    guard let number = value.float ?? value.integer.map(Double.init) else {
      throw mismatch(key, "a number", value)
    }
    guard range.contains(number) else {
      throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(number)")
    }
    return number
  }

  func duration(_ key: String) throws(ConfigurationError) -> Duration? {
    guard let text = try string(key) else { return nil }
    do {
      return try DurationParser.parse(text)
    } catch {
      throw self.error(key, error.description)
    }
  }

  func stringArray(_ key: String) throws(ConfigurationError) -> [String]? {
    guard let value = table[key] else { return nil }
    guard let array = value.array else { throw mismatch(key, "an array of strings", value) }
    var strings: [String] = []
    strings.reserveCapacity(array.count)
    for (index, element) in array.enumerated() {
      guard let string = element.value.string else {
        throw error("\(key)[\(index)]", "expected a string, got \(element.value.typeName)")
      }
      strings.append(try withoutNUL(string, "\(key)[\(index)]"))
    }
    return strings
  }

  /// A string or a non-empty array of strings (`calendar = "daily"` or `calendar = [...]`).
  func stringOrStringArray(_ key: String) throws(ConfigurationError) -> [String]? {
    guard let value = table[key] else { return nil }
    if let string = value.string { return [try withoutNUL(string, key)] }
    guard let strings = try stringArray(key), !strings.isEmpty else {
      throw mismatch(key, "a string or a non-empty array of strings", value)
    }
    return strings
  }

  func stringTable(_ key: String) throws(ConfigurationError) -> [String: String]? {
    guard let value = table[key] else { return nil }
    guard let inner = value.table else { throw mismatch(key, "a table of strings", value) }
    var result: [String: String] = [:]
    for entry in inner.entries {
      guard let string = entry.node.value.string else {
        throw error("\(key).\(entry.key)", "expected a string")
      }
      result[entry.key] = try withoutNUL(string, "\(key).\(entry.key)")
    }
    return result
  }

  /// The sub-table at `key`, or nil when absent.
  func table(_ key: String) throws(ConfigurationError) -> TableReader? {
    guard let value = table[key] else { return nil }
    guard let inner = value.table else { throw mismatch(key, "a table", value) }
    return TableReader(
      table: inner, path: keyPath(key), file: file, jobId: jobId, problems: problems)
  }

  /// The tables of an array of tables (`[[job]]`), or an empty array when absent.
  func tables(_ key: String) throws(ConfigurationError) -> [TableReader] {
    guard let value = table[key] else { return [] }
    guard let array = value.array else { throw mismatch(key, "an array of tables", value) }
    var readers: [TableReader] = []
    readers.reserveCapacity(array.count)
    for (index, element) in array.enumerated() {
      guard let inner = element.value.table else {
        throw error("\(key)[\(index)]", "expected a table, got \(element.value.typeName)")
      }
      // A `[[job]]` is named by its id in messages.
      let id = path.isEmpty && key == "job" ? inner["id"]?.string : jobId
      readers.append(
        TableReader(
          table: inner, path: keyPath("\(key)[\(index)]"), file: file, jobId: id,
          problems: problems))
    }
    return readers
  }

  private func mismatch(_ key: String, _ expected: String, _ value: TOMLValue)
    -> ConfigurationError
  {
    error(key, "expected \(expected), got \(value.typeName)")
  }
}

/// The known keys nearest to a misspelled one, by edit distance.
enum KeySuggestion {
  /// The keys of `known` at the smallest Levenshtein distance from `key`, when that distance
  /// is small for its length (at most a third of it, and at least 2 allowed); empty when none
  /// is close.
  static func nearest(to key: String, in known: [String]) -> [String] {
    let limit = max(2, key.count / 3)
    var best: [String] = []
    var bestDistance = limit + 1
    for candidate in known.sorted() {
      let distance = editDistance(Array(key.lowercased()), Array(candidate))
      if distance < bestDistance {
        (best, bestDistance) = ([candidate], distance)
      } else if distance == bestDistance {
        best.append(candidate)
      }
    }
    return best
  }

  /// Levenshtein distance: insertions, deletions and substitutions.
  static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
      current[0] = i
      for j in stride(from: 1, through: b.count, by: 1) {
        current[j] = min(
          previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&previous, &current)
    }
    return previous[b.count]
  }
}
