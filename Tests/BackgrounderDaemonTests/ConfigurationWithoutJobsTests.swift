import BackgrounderDaemon
import Testing

/// `ConfigurationLoader.parse(…, decodingJobs: false)`, what `status` reads: every setting but
/// the jobs, and still every TOML error of the whole file.
@Suite struct ConfigurationWithoutJobsTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func settings(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try ConfigurationLoader.parse(
      contents: Array(text.utf8), path: "test.toml", locations: locations, decodingJobs: false)
  }

  private func error(_ text: String) -> ConfigurationError? {
    do {
      _ = try settings(text)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsTheSettingsAfterTheJobsAndLeavesTheJobsOut() throws {
    let configuration = try settings(
      """
      [[job]]
      id = "dev.example.a"
      command = ["/bin/true"]
      every = "1h"

      [store]
      path = "/var/lib/x/state.sqlite"
      [control]
      socket = "/run/x/control.sock"
      [network]
      metered = ["wwan*"]
      networkmanager = false
      """)
    #expect(configuration.storePath == "/var/lib/x/state.sqlite")
    #expect(configuration.controlSocketPath == "/run/x/control.sock")
    #expect(configuration.meteredInterfaces == ["wwan*"])
    #expect(configuration.useNetworkManager == false)
    #expect(configuration.jobs.isEmpty)
  }

  @Test func aJobsBadValueIsNotDecoded() throws {
    let configuration = try settings(
      """
      [store]
      path = "/var/lib/x/state.sqlite"
      [[job]]
      id = "dev.example.a"
      command = ["/bin/true"]
      every = "soon"
      """)
    #expect(configuration.storePath == "/var/lib/x/state.sqlite")
    // The same text with the jobs decoded is rejected.
    #expect(throws: ConfigurationError.self) {
      try ConfigurationLoader.parse(
        contents: Array(
          "[[job]]\nid = \"dev.example.a\"\ncommand = [\"/bin/true\"]\nevery = \"soon\"\n".utf8),
        path: "test.toml", locations: locations)
    }
  }

  @Test func aSyntaxErrorInAJobTableIsAnErrorNamingLineAndColumn() {
    let problem = error(
      """
      [store]
      path = "/var/lib/x/state.sqlite"
      [[job]]
      id = "dev.example.a"
      every = [ }
      """)
    #expect(
      problem?.description.hasPrefix("test.toml:5:11: TOML syntax error") == true,
      "\(String(describing: problem))")
  }

  @Test func jobThatIsNotATableIsAnError() {
    let problem = error("job = 3\n")
    #expect(problem?.key == "job", "\(String(describing: problem))")
  }

  @Test func aBadSettingIsStillAnErrorNamingItsKey() {
    let problem = error("[store]\npath = 1\n")
    #expect(problem?.key == "store.path", "\(String(describing: problem))")
    #expect(problem?.line == 2)
  }

  @Test func anUnknownTopLevelTableIsStillAnError() {
    #expect(error("[jobs]\nid = \"x\"\n")?.key == "jobs")
  }
}
