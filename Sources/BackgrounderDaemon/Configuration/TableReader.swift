import TOMLKit

/// Reads typed values out of one TOML table, remembering which keys were read so that the rest
/// can be reported as unknown, and turning every problem into a located `ConfigurationError`.
struct TableReader {
  let table: TOMLTable
  /// Dotted path of this table (`""` for the document, `job[0]`, `job[0].backoff`).
  let path: String
  let file: String
  let locator: KeyLocator

  func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  func error(_ key: String?, _ message: String) -> ConfigurationError {
    let full = key.map(keyPath) ?? (path.isEmpty ? nil : path)
    return ConfigurationError(
      file: file, line: locator.line(of: full ?? ""), key: full, message: message)
  }

  /// Throws for the first key of this table that is not in `known`.
  func rejectUnknownKeys(_ known: Set<String>) throws(ConfigurationError) {
    for key in table.keys.sorted() where !known.contains(key) {
      let expected = known.sorted().joined(separator: ", ")
      throw error(key, "unknown key; expected one of: \(expected)")
    }
  }

  func contains(_ key: String) -> Bool { table[key] != nil }

  func string(_ key: String) throws(ConfigurationError) -> String? {
    guard let value = table[key] else { return nil }
    guard let string = value.string else { throw mismatch(key, "a string", value) }
    return string
  }

  func bool(_ key: String) throws(ConfigurationError) -> Bool? {
    guard let value = table[key] else { return nil }
    guard let bool = value.bool else { throw mismatch(key, "true or false", value) }
    return bool
  }

  func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
    guard let value = table[key] else { return nil }
    guard let int = value.int else { throw mismatch(key, "an integer", value) }
    guard range.contains(int) else {
      throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(int)")
    }
    return int
  }

  func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
    guard let value = table[key] else { return nil }
    guard let number = value.double ?? value.int.map(Double.init) else {
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
    for (index, element) in array.enumerated() {
      guard let string = element.string else {
        throw error("\(key)[\(index)]", "expected a string, got \(element.type)")
      }
      strings.append(string)
    }
    return strings
  }

  func stringTable(_ key: String) throws(ConfigurationError) -> [String: String]? {
    guard let value = table[key] else { return nil }
    guard let inner = value.table else { throw mismatch(key, "a table of strings", value) }
    var result: [String: String] = [:]
    for name in inner.keys {
      guard let string = inner[name]?.string else {
        throw error("\(key).\(name)", "expected a string")
      }
      result[name] = string
    }
    return result
  }

  /// The sub-table at `key`, or nil when absent.
  func table(_ key: String) throws(ConfigurationError) -> TableReader? {
    guard let value = table[key] else { return nil }
    guard let inner = value.table else { throw mismatch(key, "a table", value) }
    return TableReader(table: inner, path: keyPath(key), file: file, locator: locator)
  }

  /// The tables of an array of tables (`[[job]]`), or an empty array when absent.
  func tables(_ key: String) throws(ConfigurationError) -> [TableReader] {
    guard let value = table[key] else { return [] }
    guard let array = value.array else { throw mismatch(key, "an array of tables", value) }
    var readers: [TableReader] = []
    for (index, element) in array.enumerated() {
      guard let inner = element.table else {
        throw error("\(key)[\(index)]", "expected a table, got \(element.type)")
      }
      readers.append(
        TableReader(table: inner, path: keyPath("\(key)[\(index)]"), file: file, locator: locator))
    }
    return readers
  }

  private func mismatch(
    _ key: String, _ expected: String, _ value: any TOMLValueConvertible
  ) -> ConfigurationError {
    error(key, "expected \(expected), got \(value.type)")
  }
}
