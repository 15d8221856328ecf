import ArgumentParser
import BackgrounderDaemon

/// `backgrounder trigger ID`: run a job now.
/// Synchronous: one request on the main thread, so that the verb starts no thread (issue #35:
/// `trigger` → the job's side effect).
struct TriggerCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "trigger",
    abstract: "Run a job now, bypassing its constraints and backoff.",
    discussion: """
      Like iOS's simulate-launch hook: the running daemon starts the job at once (a run \
      already in flight is not started twice); a finished one-time job runs once more. It \
      answers once the run has started, or exits 1 saying why it could not start (e.g. the \
      store could not record it). Needs a running daemon.
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
    try DaemonConnection.requestBlocking(.trigger(id: line.id), config: line.config) {
      "no daemon is running (\($0)); start it with `backgrounder run`, which runs due jobs itself"
    }
  }
}
