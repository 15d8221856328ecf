import Glibc

/// User overrides: interface-name and Wi-Fi SSID globs (fnmatch syntax) forced metered or
/// unmetered.
public struct InterfaceOverrides: Sendable, Equatable {
  /// Interface-name globs forcing "metered"; they win over ``unmetered``.
  public var metered: [String]
  /// Interface-name globs forcing "unmetered".
  public var unmetered: [String]
  /// SSID globs forcing "metered" (`[network] metered-ssids`); they win over
  /// ``unmeteredSSIDs``.
  public var meteredSSIDs: [String]
  /// SSID globs forcing "unmetered" (`[network] unmetered-ssids`).
  public var unmeteredSSIDs: [String]

  /// Creates overrides from the glob lists.
  public init(
    metered: [String] = [], unmetered: [String] = [], meteredSSIDs: [String] = [],
    unmeteredSSIDs: [String] = []
  ) {
    self.metered = metered
    self.unmetered = unmetered
    self.meteredSSIDs = meteredSSIDs
    self.unmeteredSSIDs = unmeteredSSIDs
  }

  /// The first matching glob and whether it forces metered, or `nil`.
  public func decision(forInterface name: String) -> (pattern: String, metered: Bool)? {
    if let pattern = metered.first(where: { Self.matches($0, name) }) { return (pattern, true) }
    if let pattern = unmetered.first(where: { Self.matches($0, name) }) { return (pattern, false) }
    return nil
  }

  /// The first SSID glob matching `ssid` and whether it forces metered, or `nil`.
  public func decision(forSSID ssid: String) -> (pattern: String, metered: Bool)? {
    if let pattern = meteredSSIDs.first(where: { Self.matches($0, ssid) }) {
      return (pattern, true)
    }
    if let pattern = unmeteredSSIDs.first(where: { Self.matches($0, ssid) }) {
      return (pattern, false)
    }
    return nil
  }

  static func matches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, 0) == 0
  }
}
