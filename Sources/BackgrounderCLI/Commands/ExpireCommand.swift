import ArgumentParser
import BackgrounderDaemon

/// `backgrounder expire ID`: simulate budget expiry.
struct ExpireCommand: AsyncParsableCommand {
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

  func run() async throws {
    let configuration = try config.load()
    guard let response = try await DaemonConnection.send(.expire(id: job.id), configuration) else {
      throw OperatorError("no daemon is running (\(configuration.controlSocketPath))")
    }
    try DaemonConnection.report(response)
  }
}
