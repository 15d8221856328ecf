import BackgrounderDaemon
import Foundation
import Testing

/// A NUL inside an argv element, an environment value or a path would silently cut it short
/// where it becomes a C string (issue #40, finding 10): refused, naming the key, whether it
/// comes from the config (`"\u0000"` in TOML) or from a request (`schedule`, the control
/// socket).
@Suite struct NulRefusalTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func error(_ text: String) -> ConfigurationError? {
    do {
      _ = try ConfigurationLoader.parse(text, path: "nul.toml", locations: locations)
      return nil
    } catch {
      return error
    }
  }

  private static let job = """
    [[job]]
    id = "dev.example.nul"
    every = "1h"

    """

  @Test("a NUL in the config's argv, hook, environment or path values is refused, naming the key")
  func configValuesWithNulAreRefused() throws {
    let nul = "\\u0000"
    let cases: [(String, String)] = [
      (Self.job + "command = [\"/bin/rm\", \"-rf\", \"/tmp/x\(nul)/etc\"]", "job[0].command[2]"),
      (Self.job + "command = [\"/bin/true\(nul)x\"]", "job[0].command[0]"),
      (
        Self.job + "command = [\"/bin/true\"]\non-failure = [\"/bin/notify\", \"a\(nul)b\"]",
        "job[0].on-failure[1]"
      ),
      ("[daemon]\non-stale = [\"/bin/notify\(nul)\"]", "daemon.on-stale[0]"),
      (
        Self.job + "command = [\"/bin/true\"]\nenvironment = { TOKEN = \"a\(nul)b\" }",
        "job[0].environment.TOKEN"
      ),
      (
        Self.job + "command = [\"/bin/true\"]\nworking-directory = \"/srv\(nul)/x\"",
        "job[0].working-directory"
      ),
      ("[store]\npath = \"/var/lib/x\(nul)/state.sqlite\"", "store.path"),
      ("[control]\nsocket = \"/run/x\(nul)/s\"", "control.socket"),
      ("[metrics]\nfile = \"/run/m\(nul)\"", "metrics.file"),
      (
        Self.job + "command = [\"/bin/true\"]\nrequires-mount = \"/mnt\(nul)\"",
        "job[0].requires-mount"
      ),
    ]
    for (text, key) in cases {
      let problem = try #require(error(text), "\(text)")
      #expect(problem.key == key, "\(text): \(problem)")
      #expect(problem.message.contains("NUL"), "\(text): \(problem)")
      #expect(problem.line != nil, "\(text): \(problem)")
    }
    // The same values without the NUL are fine.
    #expect(error(Self.job + "command = [\"/bin/rm\", \"-rf\", \"/tmp/x/etc\"]") == nil)
  }

  @Test("a request (schedule flags, the control socket) with a NUL is refused, naming the key")
  func requestsWithNulAreRefused() {
    func problem(_ change: (inout JobDefinition) -> Void) -> String? {
      var job = JobDefinition(
        id: "dev.example.nul", command: ["/bin/echo", "ok"], schedule: .once(delay: .zero))
      change(&job)
      guard let (key, message) = JobValidation.problem(with: job) else { return nil }
      #expect(message.contains("NUL"), "\(key): \(message)")
      return key
    }
    #expect(problem { _ in } == nil)
    #expect(problem { $0.command = ["/bin/echo", "a\u{0}b"] } == "command[1]")
    #expect(problem { $0.environment = ["TOKEN": "a\u{0}b"] } == "environment.TOKEN")
    #expect(problem { $0.workingDirectory = "/srv\u{0}/x" } == "working-directory")
    #expect(problem { $0.requiresMount = "/mnt\u{0}" } == "requires-mount")
    #expect(problem { $0.ssids = ["home", "cafe\u{0}"] } == "ssids[1]")
  }
}
