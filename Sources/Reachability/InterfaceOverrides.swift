import Glibc

/// User overrides: interface-name globs (fnmatch syntax) forced metered or unmetered.
public struct InterfaceOverrides: Sendable, Equatable {
  /// Globs forcing "metered"; they win over ``unmetered``.
  public var metered: [String]
  /// Globs forcing "unmetered".
  public var unmetered: [String]

  /// Creates overrides from two glob lists.
  public init(metered: [String] = [], unmetered: [String] = []) {
    self.metered = metered
    self.unmetered = unmetered
  }

  /// The first matching glob and whether it forces metered, or `nil`.
  public func decision(forInterface name: String) -> (pattern: String, metered: Bool)? {
    if let pattern = metered.first(where: { Self.matches($0, name) }) { return (pattern, true) }
    if let pattern = unmetered.first(where: { Self.matches($0, name) }) { return (pattern, false) }
    return nil
  }

  static func matches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, 0) == 0
  }
}
