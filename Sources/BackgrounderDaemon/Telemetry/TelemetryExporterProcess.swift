import Foundation
import Logging

/// Runs `backgrounder-otlp-export BATCH.json` through the ``CommandRunner`` (own session and
/// cgroup as a job's, clean environment, output logged and bounded) as job
/// `backgrounder.telemetry`.
enum TelemetryExporterProcess {
  /// The job id the exporter's runs and output are logged under.
  static let jobID = "backgrounder.telemetry"

  /// The daemon's proxy settings, which libcurl reads, passed on to the exporter.
  static let proxyVariables: Set<String> = [
    "https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
  ]

  /// The exporter `settings` name, or `backgrounder-otlp-export` next to this executable.
  static func path(_ settings: TelemetrySettings) -> String {
    if let exporter = settings.exporter { return exporter }
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent()
      .appendingPathComponent("backgrounder-otlp-export").path
  }

  /// A ``TelemetryExport/Send`` that runs `exporter`.
  /// The collector's `Retry-After` is read from `retryAfterFile` (where the batch tells the
  /// exporter to write it).
  static func send(runner: CommandRunner, exporter: String, retryAfterFile: String, logger: Logger)
    -> TelemetryExport.Send
  {
    { batchFile in
      let daemon = ProcessInfo.processInfo.environment
      let environment = JobEnvironment.build(
        daemon: daemon, inherit: false, job: daemon.filter { proxyVariables.contains($0.key) },
        backgrounder: [:])
      let outcome = await runner.run(
        argv: [exporter, batchFile], environment: environment, workingDirectory: nil,
        jobID: jobID)
      if case .exited(0) = outcome.termination { return .delivered }
      logger.warning(
        "telemetry exporter failed",
        metadata: [
          "exporter": "\(exporter)", "outcome": "\(outcome.termination)",
          "output": "\(outcome.outputTail)",
        ])
      return .failed(retryAfter: TelemetryExport.takeRetryAfter(retryAfterFile))
    }
  }
}
