extension NetworkRequirement {
  /// What a `not-roaming` task waits for, in words: "a network that is not roaming", with why
  /// roaming is not known when it is not ("(roaming unknown: ModemManager not running)").
  public static func notRoamingPhrase(_ roamingUnknown: String?) -> String {
    "a network that is not roaming" + (roamingUnknown.map { " (roaming unknown: \($0))" } ?? "")
  }
}
