/// Reads the `[notify]` table: `desktop = true` opts the (user) daemon into freedesktop
/// desktop notices of failures and stale jobs on the session bus.
enum NotifySettings {
  /// The keys of `[notify]`.
  static let keys = ["desktop"]

  /// Whether `[notify] desktop` is set to true (default false).
  static func desktop(_ table: TableReader) throws(ConfigurationError) -> Bool {
    try table.rejectUnknownKeys(keys)
    return try table.bool("desktop") ?? false
  }
}
