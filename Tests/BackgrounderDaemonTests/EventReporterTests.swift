import Backgrounder
import Foundation
import Logging
import Testing

@testable import BackgrounderDaemon

/// Runs started = results, per job: every way a started run ends is counted once in
/// `backgrounder_results_total` (the OTLP end-to-end test checks the same in the metrics the
/// packaged daemon exports; it failed once when a run ended before its work began).
@Suite struct EventReporterTests {
  private func event(_ job: String, _ kind: MonitorEvent.Kind) throws -> MonitorEvent {
    MonitorEvent(
      taskId: try TaskId("dev.example." + job), time: Date(timeIntervalSince1970: 0), kind: kind)
  }

  private func value(_ text: String, _ series: String) -> String? {
    text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
      .map { String($0.dropFirst(series.count + 1)) }
  }

  @Test func everyStartedRunIsCountedOnceAsAResult() throws {
    let metrics = MetricsFile(path: nil)
    let reporter = EventReporter(logger: Logger(label: "test"), metrics: metrics)
    let runs: [(String, [MonitorEvent.Kind])] = [
      // The network changed between the decision and the start.
      ("changed", [.workStarted(attempt: 0), .attemptDeferred(reason: .constraintLost)]),
      // A condition lost while running: stopped, then deferred (one result, not two).
      (
        "stopped",
        [
          .workStarted(attempt: 0), .workStopped(attempt: 0, reason: .networkLost),
          .attemptDeferred(reason: .constraintLost),
        ]
      ),
      ("shutdown", [.workStarted(attempt: 0), .cancelled(source: .shutdown)]),
      ("cancelled", [.workStarted(attempt: 0), .cancelled(source: .user)]),
      ("declined", [.workStarted(attempt: 0), .skipped(reason: .factoryDeclined)]),
      ("store", [.workStarted(attempt: 0), .libraryError(message: "disk full")]),
      (
        "ok",
        [
          .workStarted(attempt: 0),
          .workCompleted(attempt: 0, result: .success, runtime: .seconds(1)),
          // Events of a job with no run in flight count no result.
          .attemptDeferred(reason: .reachabilityTimeout), .cancelled(source: .user),
        ]
      ),
    ]
    for (job, kinds) in runs {
      for kind in kinds { reporter.report(try event(job, kind)) }
    }
    let text = metrics.snapshot()
    let expected = [
      "changed": "retry", "stopped": "retry", "shutdown": "retry", "cancelled": "cancelled",
      "declined": "failure", "store": "retry", "ok": "success",
    ]
    for (job, result) in expected {
      #expect(value(text, "backgrounder_runs_total{job=\"dev.example.\(job)\"}") == "1", "\(job)")
      #expect(
        value(text, "backgrounder_results_total{job=\"dev.example.\(job)\",result=\"\(result)\"}")
          == "1",
        "\(job)")
      let results = text.split(separator: "\n").filter {
        $0.hasPrefix("backgrounder_results_total{job=\"dev.example.\(job)\",")
      }
      #expect(results.count == 1, "\(job): \(results)")
    }
    // The last success, at the successful run's end (the event's time); only the success.
    let success = try event("ok", .workCompleted(attempt: 0, result: .success, runtime: .zero))
    #expect(
      value(text, "backgrounder_job_last_success_timestamp_seconds{job=\"dev.example.ok\"}")
        .flatMap(Double.init) == success.time.timeIntervalSince1970)
    #expect(
      value(text, "backgrounder_job_last_success_timestamp_seconds{job=\"dev.example.changed\"}")
        == nil)
  }

  @Test func anAttemptInterruptedBeforeThisStartIsStillARetry() throws {
    let metrics = MetricsFile(path: nil)
    let reporter = EventReporter(logger: Logger(label: "test"), metrics: metrics)
    reporter.report(try event("killed", .attemptFailed(reason: .interrupted)))
    reporter.report(try event("killed", .workStarted(attempt: 1)))
    reporter.report(try event("killed", .attemptFailed(reason: .expired)))
    let text = metrics.snapshot()
    #expect(
      value(text, "backgrounder_results_total{job=\"dev.example.killed\",result=\"retry\"}") == "2")
    #expect(value(text, "backgrounder_runs_total{job=\"dev.example.killed\"}") == "1")
  }
}
