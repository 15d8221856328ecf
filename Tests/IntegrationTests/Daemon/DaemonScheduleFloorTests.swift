import Foundation
import TestSupport
import Testing

/// Issue #40 with the real binary, no daemon started: a sub-second calendar repetition is
/// refused by `doctor`, `run` and `calendar` (it used to pass `doctor`, then spin the daemon at
/// 100 % CPU); a FIFO as the store is refused by `history` (`--store` or the config's
/// `[store] path`) instead of hanging it. Each verb is bounded by the harness (60 s).
@Suite(.blockingIO, .timeLimit(.minutes(2)))
struct DaemonScheduleFloorTests {
  private static let subSecond = "*-*-* *:*:00/0.000001"

  @Test("a sub-second calendar repetition: doctor, run and calendar refuse it, naming it")
  func subSecondCalendarIsRefused() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    try workspace.writeConfig(
      jobs: """
        [[job]]
        id = "dev.e2e.spin"
        command = ["/bin/true"]
        calendar = "\(Self.subSecond)"
        """)
    for verb in ["doctor", "run"] {
      let result = try await harness.cli(verb, "--config", workspace.configPath)
      let output = result.stdout + result.stderr
      #expect(result.status != 0, "\(verb): \(result)")
      #expect(
        output.contains("job \"dev.e2e.spin\": calendar") && output.contains(Self.subSecond)
          && output.contains("0.000001s") && output.contains("shorter than 1s"),
        "\(verb): \(result)")
    }
    #expect(!FileManager.default.fileExists(atPath: workspace.storePath), "nothing was started")
    let calendar = try await harness.cli("calendar", Self.subSecond)
    #expect(calendar.status == 1, "\(calendar)")
    #expect(calendar.stderr.contains("shorter than 1s"), "\(calendar)")
    let fine = try await harness.cli("calendar", "*-*-* *:*:00/1")
    #expect(fine.status == 0, "\(fine)")
  }

  @Test("history, doctor and status on a FIFO store (--store or the config's) end, saying so")
  func fifoStoreIsRefused() async throws {
    let workspace = try DaemonWorkspace()
    defer { workspace.remove() }
    let harness = try DaemonHarness(workspace: workspace)
    defer { harness.cleanUp() }
    #expect(mkfifo(workspace.storePath, 0o600) == 0)
    try workspace.writeConfig(jobs: "")
    for arguments in [
      ["history", "dev.e2e.x", "--store", workspace.storePath],
      ["history", "dev.e2e.x", "--config", workspace.configPath],
    ] {
      let result = try await harness.cli(arguments)
      #expect(result.status != 0, "\(result)")
      #expect(
        result.stderr.contains("\(workspace.storePath): is a FIFO, not a regular file"),
        "\(result)")
    }
    let doctor = try await harness.cli("doctor", "--config", workspace.configPath)
    #expect(doctor.status == 1, "\(doctor)")
    #expect(
      doctor.stdout.contains("\(workspace.storePath) is a FIFO, not a regular file"), "\(doctor)")
    // `status` reads the store the same way: it ends, reporting the store unreadable.
    let status = try await harness.cli("status", "--config", workspace.configPath)
    #expect(status.stdout.contains(workspace.storePath), "\(status)")
  }
}
