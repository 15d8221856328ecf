import BackgrounderDaemon
import Foundation
import Testing

@Suite struct MetricsFileTests {
  @Test func writesPrometheusTextFormat() throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("metrics-\(UUID().uuidString).prom").path
    defer { try? FileManager.default.removeItem(atPath: path) }
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
}
