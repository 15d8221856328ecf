import Foundation
import Logging
import Testing

@testable import BackgrounderDaemon

/// A run whose cap is to be applied but cannot be (here: the daemon's `net_prio` directory is
/// missing, so the run's cgroup cannot be made): with `bandwidth-required` the command never
/// starts and the worker asks for a retry; without it, the run goes uncapped.
@Suite struct RunShapingRunnerTests {
  private func runner() -> CommandRunner {
    let logger = Logger(label: "test.run-shaping")
    var containment = RunContainment(logger: logger)
    containment.shaping = RunShaping(
      support: .netPrio(directory: "/nonexistent-\(UUID().uuidString)"), logger: logger)
    return CommandRunner(gracePeriod: .milliseconds(300), containment: containment, logger: logger)
  }

  private func run(required: Bool, marker: String) async -> CommandOutcome {
    await runner().run(
      argv: ["/bin/sh", "-c", "echo ran > \(marker)"], environment: [:], workingDirectory: nil,
      jobID: "dev.example.capped",
      bandwidth: .shape(interface: "lo", bitsPerSecond: 1_000_000), bandwidthRequired: required)
  }

  @Test func aRequiredCapThatCannotBeAppliedKeepsTheCommandFromStarting() async {
    let marker = FileManager.default.temporaryDirectory.path + "/shap-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: marker) }
    let outcome = await run(required: true, marker: marker)
    #expect(outcome.bandwidthUnapplied)
    #expect(!FileManager.default.fileExists(atPath: marker), "the command must not have run")
    guard case .retry(let reason) = CommandWorker.result(of: outcome) else {
      Issue.record("expected a retry, got \(CommandWorker.result(of: outcome))")
      return
    }
    #expect(reason?.hasPrefix("bandwidth-required: the cap could not be applied") == true)
  }

  @Test func anOptionalCapThatCannotBeAppliedLetsTheRunGoUncapped() async {
    let marker = FileManager.default.temporaryDirectory.path + "/shap-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: marker) }
    let outcome = await run(required: false, marker: marker)
    #expect(outcome.termination == .exited(0))
    #expect(!outcome.bandwidthUnapplied)
    #expect(FileManager.default.fileExists(atPath: marker))
  }
}
