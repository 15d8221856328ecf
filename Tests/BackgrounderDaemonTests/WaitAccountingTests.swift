import Backgrounder
import Foundation
import Testing

@testable import BackgrounderDaemon

/// `backgrounder_job_waited_seconds_total{job,condition}`: the time a due job waited, per
/// condition, from the runtime's wait changes.
@Suite struct WaitAccountingTests {
  private let t0 = Date(timeIntervalSince1970: 1_700_000_000)
  private let job = try! TaskId("dev.example.backup")
  private let other = try! TaskId("dev.example.sync")

  @Test func eachConditionGetsTheTimeUntilTheWaitEndsOrChanges() {
    var accounting = WaitAccounting()
    #expect(accounting.change(job: job, predicates: [.networkRequired(.unmetered)], at: t0) == [])
    #expect(accounting.change(job: other, predicates: [.mounted(path: "/mnt")], at: t0) == [])
    // 60 s on unmetered, then charging is missing too.
    #expect(
      accounting.change(
        job: job, predicates: [.networkRequired(.unmetered), .requiresCharging],
        at: t0.addingTimeInterval(60))
        == [.init(job: job, condition: "unmetered", seconds: 60)])
    // 30 s on both, then it starts.
    #expect(
      accounting.change(job: job, predicates: [], at: t0.addingTimeInterval(90))
        == [
          .init(job: job, condition: "charging", seconds: 30),
          .init(job: job, condition: "unmetered", seconds: 30),
        ])
    // Not waiting: nothing to add; the other job's wait is its own.
    #expect(accounting.change(job: job, predicates: [], at: t0.addingTimeInterval(100)) == [])
    #expect(
      accounting.change(job: other, predicates: [], at: t0.addingTimeInterval(120))
        == [.init(job: other, condition: "mount", seconds: 120)])
    // Backoff is no condition.
    #expect(
      accounting.change(
        job: job, predicates: [.waitingForBackoff(until: t0)], at: t0.addingTimeInterval(130))
        == [])
    #expect(accounting.change(job: job, predicates: [], at: t0.addingTimeInterval(200)) == [])
  }

  @Test func theMetricIsWrittenPerJobAndCondition() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "waited-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let metrics = MetricsFile(path: directory.appendingPathComponent("m.prom").path)
    let feed = WaitMetrics(metrics: metrics)
    feed.change(job: job, predicates: [.requiresBatteryNotLow], at: t0)
    feed.change(job: job, predicates: [], at: t0.addingTimeInterval(45))
    feed.change(job: job, predicates: [.requiresBatteryNotLow], at: t0.addingTimeInterval(100))
    feed.change(job: job, predicates: [], at: t0.addingTimeInterval(105))
    try metrics.write()
    let text = try String(contentsOfFile: try #require(metrics.path), encoding: .utf8)
    #expect(
      text.contains(
        "backgrounder_job_waited_seconds_total{job=\"\(job)\",condition=\"battery\"} 50"),
      "\(text)")
  }
}
