import BackgrounderDaemon
import Foundation
import Testing

@Suite struct MetricsFileTests {
  @Test func writesPrometheusTextFormat() throws {
    let directory = try Self.ownDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/backgrounder.prom"
    let metrics = MetricsFile(path: path)
    metrics.recordRunStarted(job: "dev.example.a")
    metrics.recordRunStarted(job: "dev.example.a")
    metrics.recordResult(job: "dev.example.a", result: "retry")
    metrics.recordDeferral(job: "dev.example.a", reason: "network")
    metrics.setNetwork(reachable: true, metered: false)
    metrics.setPower(externalPower: false, charging: false, batteryPercent: 42.5)
    try metrics.write()
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("backgrounder_runs_total{job=\"dev.example.a\"} 2"))
    #expect(text.contains("backgrounder_results_total{job=\"dev.example.a\",result=\"retry\"} 1"))
    #expect(
      text.contains("backgrounder_deferrals_total{job=\"dev.example.a\",reason=\"network\"} 1"))
    #expect(text.contains("backgrounder_network_reachable 1"))
    #expect(text.contains("backgrounder_network_metered 0"))
    #expect(text.contains("backgrounder_battery_percent 42.5"))
    #expect(text.contains("# TYPE backgrounder_runs_total counter"))
  }

  /// A burst of changes is one write, with the burst's last values; a change after it, one more.
  @Test func aBurstOfChangesIsOneWrite() async throws {
    let directory = try Self.ownDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/backgrounder.prom"
    let metrics = MetricsFile(path: path, writeDelay: .milliseconds(100))
    for _ in 0..<50 {
      metrics.recordRunStarted(job: "dev.example.a")
      metrics.writeSoon { Issue.record("\($0)") }
    }
    try await Self.waitFor(path, containing: "backgrounder_runs_total{job=\"dev.example.a\"} 50")
    #expect(metrics.writeCount == 1)
    metrics.recordRunStarted(job: "dev.example.a")
    metrics.writeSoon { Issue.record("\($0)") }
    try await Self.waitFor(path, containing: "backgrounder_runs_total{job=\"dev.example.a\"} 51")
    #expect(metrics.writeCount == 2)
  }

  /// A directory of our own: a directory others may write (such as /tmp itself) is refused.
  private static func ownDirectory() throws -> String {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("metrics-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: false,
      attributes: [.posixPermissions: 0o755])
    return directory
  }

  /// A liveness bound, not a timing goal: the write's delayed task waits on the cooperative
  /// pool behind the whole suite's work (30 s were missed once in CI's `swift test` on 2 cores,
  /// 2026-11-30).
  private static func waitFor(_ path: String, containing text: String) async throws {
    let deadline = ContinuousClock.now + .seconds(120)
    while (try? String(contentsOfFile: path, encoding: .utf8))?.contains(text) != true {
      guard ContinuousClock.now < deadline else {
        Issue.record("\(path) never held \(text)")
        return
      }
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}

@Suite struct MetricsFileSymlinkTests {
  private let directory = "/tmp/metrics-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)

  @Test func plantedSymlinksAreNeverFollowed() throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let victim = directory + "/victim"
    try "precious\n".write(toFile: victim, atomically: false, encoding: .utf8)
    let path = directory + "/backgrounder.prom"
    // At the target itself, and at the temporary name older versions used.
    #expect(symlink(victim, path) == 0)
    #expect(symlink(victim, directory + "/.backgrounder.prom.\(getpid()).tmp") == 0)
    let metrics = MetricsFile(path: path)
    metrics.setNetwork(reachable: true, metered: false)
    try metrics.write()
    try metrics.write()
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
    var status = stat()
    #expect(lstat(path, &status) == 0)
    #expect(status.st_mode & S_IFMT == S_IFREG)
    #expect(status.st_mode & 0o777 == 0o644)
    #expect(try String(contentsOfFile: path, encoding: .utf8).contains("network_reachable 1"))
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasPrefix(".backgrounder.prom.") && !$0.hasSuffix(".tmp") }
    #expect(leftovers.isEmpty, "temporary files left: \(leftovers)")
  }
}
