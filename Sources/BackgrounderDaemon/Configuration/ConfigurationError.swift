/// A problem in a config file, located by file, line and key.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
  /// The config file.
  public var file: String
  /// 1-based line of the offending key or syntax error, when known.
  public var line: Int?
  /// Dotted key path such as `job[2].every`, when the problem is about a key.
  public var key: String?
  /// What is wrong, in words.
  public var message: String

  public init(file: String, line: Int?, key: String?, message: String) {
    self.file = file
    self.line = line
    self.key = key
    self.message = message
  }

  public var description: String {
    let location = line.map { "\(file):\($0)" } ?? file
    if let key { return "\(location): \(key): \(message)" }
    return "\(location): \(message)"
  }
}
