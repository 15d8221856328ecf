import ArgumentParser
import BackgrounderDaemon

/// `backgrounder trigger ID`: run a job now.
struct TriggerCommand: AsyncParsableCommand {
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

  func run() async throws {
    let configuration = try config.load()
    guard let response = try await DaemonConnection.send(.trigger(id: job.id), configuration) else {
      throw OperatorError(
        "no daemon is running (\(configuration.controlSocketPath)); start it with "
          + "`backgrounder run`, which runs due jobs itself")
    }
    try DaemonConnection.report(response)
  }
}
