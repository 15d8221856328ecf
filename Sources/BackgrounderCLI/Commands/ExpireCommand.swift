import ArgumentParser
import BackgrounderDaemon

/// `backgrounder expire ID`: simulate budget expiry.
/// Synchronous: one request on the main thread, so that the verb starts no thread (issue #35:
/// `trigger` → the job's side effect).
struct ExpireCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "expire",
    abstract: "Simulate budget expiry of a running job.",
    discussion: """
      The job's process group gets SIGTERM (then SIGKILL after the grace period) and the run \
      is recorded as a retry (outcome `expired`, reason "expired on request by the operator"), \
      using an attempt as when its budget runs out. Needs a running daemon and a running job.
      """
  )

  @OptionGroup var job: JobIdArgument
  @OptionGroup var config: ConfigOption

  func run() throws {
    try Self.run(PlainControlLine(id: job.id, config: config.config))
  }

  /// Runs the command `line` reads (also for a plain line, without the argument parser:
  /// ``PlainControlLine``).
  static func run(_ line: PlainControlLine) throws {
    try DaemonConnection.requestBlocking(.expire(id: line.id), config: line.config) {
      "no daemon is running (\($0))"
    }
  }
}
