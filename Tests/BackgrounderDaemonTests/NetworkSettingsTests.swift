import BackgrounderDaemon
import Testing

/// `[network]` keys for SSID overrides, NetworkManager and the connectivity probe.
@Suite struct NetworkSettingsTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try ConfigurationLoader.parse(text, path: "test.toml", locations: locations)
  }

  @Test func readsSSIDOverridesNetworkManagerAndTheProbe() throws {
    let configuration = try parse(
      """
      [network]
      metered-ssids = ["Pixel*", "iPhone*"]
      unmetered-ssids = ["Home"]
      networkmanager = false
      connectivity-check = { url = "http://192.0.2.254/check", expect = "ok" }
      """)
    #expect(configuration.meteredSSIDs == ["Pixel*", "iPhone*"])
    #expect(configuration.unmeteredSSIDs == ["Home"])
    #expect(!configuration.useNetworkManager)
    #expect(configuration.connectivityCheck?.host == "192.0.2.254")
    #expect(configuration.connectivityCheck?.expect == "ok")
    let monitor = configuration.reachabilityConfiguration(sysfsRoot: "/sys")
    #expect(monitor.meteredSSIDs == ["Pixel*", "iPhone*"])
    #expect(monitor.unmeteredSSIDs == ["Home"])
  }

  @Test func defaultsAreNetworkManagerOnAndNoProbe() throws {
    let configuration = try parse("[network]\nmetered = [\"ww*\"]\n")
    #expect(configuration.useNetworkManager)
    #expect(configuration.connectivityCheck == nil)
    #expect(configuration.meteredSSIDs.isEmpty)
  }

  @Test func httpsProbeIsRejectedNamingTheKey() {
    #expect {
      try parse("[network]\nconnectivity-check = { url = \"https://example.net/\" }\n")
    } throws: { error in
      "\(error)".contains("connectivity-check.url") && "\(error)".contains("only http://")
    }
  }

  @Test func probeWithoutURLIsRejected() {
    #expect {
      try parse("[network]\nconnectivity-check = { expect = \"ok\" }\n")
    } throws: { error in
      "\(error)".contains("connectivity-check.url") && "\(error)".contains("missing")
    }
  }

  @Test func unknownProbeKeyIsRejected() {
    #expect(throws: ConfigurationError.self) {
      try parse("[network]\nconnectivity-check = { url = \"http://a/\", method = \"HEAD\" }\n")
    }
  }

  @Test func ssidListMustHoldStrings() {
    #expect {
      try parse("[network]\nmetered-ssids = [\"Pixel*\", 7]\n")
    } throws: { error in
      "\(error)".contains("metered-ssids[1]")
    }
  }
}

/// `[network] source-timeout` and `[network] stale-hints`.
@Suite struct SourceLimitSettingsTests {
  private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try ConfigurationLoader.parse(
      text, path: "test.toml",
      locations: DefaultLocations(
        configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
        controlSocketPath: "/run/test/control.sock"))
  }

  @Test func defaultsAreFiveSecondsAndTwoMinutes() throws {
    let configuration = try parse("")
    #expect(configuration.sourceTimeout == .seconds(5))
    #expect(configuration.staleHints == .seconds(120))
    #expect(configuration.hintsConfiguration.sourceTimeout == .seconds(5))
    #expect(configuration.hintsConfiguration.staleHints == .seconds(120))
  }

  @Test func readsBothKeys() throws {
    let configuration = try parse("[network]\nsource-timeout = \"2s\"\nstale-hints = \"30s\"\n")
    #expect(configuration.sourceTimeout == .seconds(2))
    #expect(configuration.staleHints == .seconds(30))
    #expect(configuration.hintsConfiguration.staleHints == .seconds(30))
  }

  @Test func rejectsAZeroSourceTimeoutNamingTheKey() {
    #expect {
      try parse("[network]\nsource-timeout = \"0s\"\n")
    } throws: { error in
      "\(error)".contains("source-timeout")
    }
  }
}
