import Foundation
import TestSupport
import Testing

/// `backgrounder status` with the real binary and no daemon: which config problems it reports,
/// and that its quick start (``StatusFastStart``) leaves help and usage errors as they were.
@Suite(.blockingIO, .timeLimit(.minutes(3)))
struct StatusConfigTests {
  @Test("status exits 1 naming file, line and column of a TOML error inside a job table")
  func syntaxErrorInAJob() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.broken"
        every = [ }
        """)
    let result = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(result.status == 1, "\(result)")
    #expect(result.stdout.isEmpty, "\(result)")
    #expect(
      result.stderr.contains("\(workspace.configPath):8:11: TOML syntax error"), "\(result)")
  }

  @Test("status exits 1 naming the key of a bad setting it needs")
  func badStorePath() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeRawConfig("[store]\npath = 1\n")
    let result = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(result.status == 1, "\(result)")
    #expect(
      result.stderr.contains("\(workspace.configPath):2: store.path: expected a string"),
      "\(result)")
  }

  @Test("status does not decode the jobs: a job's bad value is doctor's to report")
  func badJobValue() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.soon"
        command = ["/bin/true"]
        every = "soon"
        """)
    let status = try await harness.cli("status", "--json", "--config", workspace.configPath)
    #expect(status.status == 0, "\(status)")
    let document = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8))
    #expect((document as? [String: Any])?["tasks"] as? [Any] != nil, "\(status)")
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(doctor.status != 0, "\(doctor)")
    #expect((doctor.stdout + doctor.stderr).contains("job \"dev.e2e.soon\": every"), "\(doctor)")
  }

  @Test("status --help and a usage error read as the whole command line's")
  func helpAndUsageErrors() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    let help = try await harness.cli("status", "--help")
    #expect(help.status == 0, "\(help)")
    #expect(help.stdout.contains("USAGE: backgrounder status"), "\(help)")
    let unknown = try await harness.cli("status", "--no-such-flag")
    #expect(unknown.status == 64, "\(unknown)")
    #expect(unknown.stderr.contains("Unknown option '--no-such-flag'"), "\(unknown)")
    #expect(unknown.stderr.contains("Usage: backgrounder status"), "\(unknown)")
  }
}
