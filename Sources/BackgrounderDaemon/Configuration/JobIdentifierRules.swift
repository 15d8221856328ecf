/// The reference's task id rules, applied to job ids at config-load time.
enum JobIdentifierRules {
  /// Why `id` is not a valid job id, or nil when it is.
  static func problem(with id: String) -> String? {
    nil
  }
}
