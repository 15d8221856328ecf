import Foundation
import TestSupport
import Testing

/// `backgrounder doctor` with the real binary.
@Suite(.blockingIO, .timeLimit(.minutes(3)))
struct DaemonDoctorTests {
  @Test("doctor exits 1 naming a job whose command does not exist")
  func missingCommand() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    let missing = workspace.file("no-such-command")
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.good"
        command = ["/bin/true"]
        once = true

        [[job]]
        id = "dev.e2e.missing"
        command = ["\(missing)", "--flag"]
        every = "1h"
        """)
    let result = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(result.status == 1, "\(result)")
    let problems = result.stdout.split(separator: "\n").filter { $0.hasPrefix("problem:") }
    #expect(problems.count == 1, "\(result)")
    #expect(
      problems.first?.contains("dev.e2e.missing") == true
        && problems.first?.contains(missing) == true, "\(result)")
    #expect(!FileManager.default.fileExists(atPath: workspace.storePath), "doctor writes nothing")
  }

  @Test("doctor exits 0 for a good config")
  func goodConfig() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    try workspace.writeConfig(
      jobs: daemonShellJob(id: "dev.e2e.fine", script: "true", schedule: "every = \"1h\""))
    let result = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(result.status == 0, "\(result)")
    #expect(!result.stdout.contains("problem:"), "\(result)")
    #expect(result.stdout.contains("job dev.e2e.fine"), "\(result)")
  }
}
