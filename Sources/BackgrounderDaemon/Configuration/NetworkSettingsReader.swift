import NetworkHints

/// Reads the `[network]` keys beyond the interface overrides: SSID overrides, NetworkManager,
/// and the connectivity probe.
enum NetworkSettingsReader {
  /// Every key `[network]` accepts.
  static let keys: [String] =
    [
      "metered", "unmetered", "metered-ssids", "unmetered-ssids", "networkmanager",
      "connectivity-check", "source-timeout", "stale-hints", "modemmanager",
    ] + MeteredBudgetSettings.networkKeys

  static func read(_ network: TableReader, into configuration: inout DaemonConfiguration)
    throws(ConfigurationError)
  {
    configuration.meteredSSIDs = try network.stringArray("metered-ssids") ?? []
    configuration.unmeteredSSIDs = try network.stringArray("unmetered-ssids") ?? []
    configuration.useNetworkManager = try network.bool("networkmanager") ?? true
    configuration.useModemManager = try network.bool("modemmanager") ?? true
    configuration.meteredBudget = try MeteredBudgetSettings.read(network: network)
    if let timeout = try network.duration("source-timeout") {
      guard timeout > .zero, timeout <= .seconds(300) else {
        throw network.error("source-timeout", "must be more than 0 s and at most 5 min")
      }
      configuration.sourceTimeout = timeout
    }
    if let stale = try network.duration("stale-hints") {
      guard stale >= .zero, stale <= .seconds(86_400) else {
        throw network.error("stale-hints", "must be between 0 s and 24 h")
      }
      configuration.staleHints = stale
    }
    if let check = try network.table("connectivity-check") {
      try check.rejectUnknownKeys(["url", "expect"])
      guard let url = try check.string("url") else {
        throw check.error("url", "missing: the http:// URL to probe")
      }
      let expect = try check.string("expect") ?? ""
      do {
        configuration.connectivityCheck = try ConnectivityCheck(url: url, expect: expect)
      } catch {
        throw check.error("url", error.description)
      }
    }
  }
}
