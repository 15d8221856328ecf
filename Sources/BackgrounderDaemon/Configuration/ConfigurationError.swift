/// A problem in a config file, located by file, line and key.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
  /// The config file.
  public var file: String
  /// 1-based line of the offending key or syntax error, when known.
  public var line: Int?
  /// 1-based column of a syntax error, when known.
  public var column: Int?
  /// Dotted key path such as `job[2].every`, when the problem is about a key.
  public var key: String?
  /// What is wrong, in words.
  public var message: String

  public init(file: String, line: Int?, column: Int? = nil, key: String?, message: String) {
    self.file = file
    self.line = line
    self.column = column
    self.key = key
    self.message = message
  }

  public var description: String {
    var location = line.map { "\(file):\($0)" } ?? file
    if line != nil, let column { location += ":\(column)" }
    if let key { return "\(location): \(key): \(message)" }
    return "\(location): \(message)"
  }
}
