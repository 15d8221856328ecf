import NetworkHints

/// Reads the `[network]` keys beyond the interface overrides: SSID overrides, NetworkManager,
/// and the connectivity probe.
enum NetworkSettingsReader {
  /// Every key `[network]` accepts.
  static let keys: [String] = [
    "metered", "unmetered", "metered-ssids", "unmetered-ssids", "networkmanager",
    "connectivity-check",
  ]

  static func read(_ network: TableReader, into configuration: inout DaemonConfiguration)
    throws(ConfigurationError)
  {
    configuration.meteredSSIDs = try network.stringArray("metered-ssids") ?? []
    configuration.unmeteredSSIDs = try network.stringArray("unmetered-ssids") ?? []
    configuration.useNetworkManager = try network.bool("networkmanager") ?? true
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
