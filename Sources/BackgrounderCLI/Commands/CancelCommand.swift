import ArgumentParser
import Backgrounder
import BackgrounderDaemon

/// `backgrounder cancel ID`.
struct CancelCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cancel",
    abstract: "Cancel a job (a running attempt is stopped).",
    discussion: """
      A job from the config file comes back on the next reload unless you remove it from the \
      file. With no daemon running, the store is edited directly.
      """
  )

  @OptionGroup var job: JobIdArgument
  @OptionGroup var config: ConfigOption

  func run() async throws {
    let configuration = try config.load()
    try await DaemonConnection.send(.cancel(id: job.id), configuration) {
      let taskId: TaskId
      do {
        taskId = try TaskId(job.id)
      } catch {
        throw OperatorError("invalid job id \"\(job.id)\": \(error)")
      }
      let outcome = try await OfflineStore.edit(configuration, logger: DaemonConnection.logger) {
        runtime, _ in await runtime.cancel(taskId)
      }
      switch outcome {
      case .cancelled: print("cancelled \(job.id) (no daemon running: store edited)")
      case .noSuchTask: throw OperatorError("no such job: \(job.id)")
      case .storeFailure(let why): throw OperatorError("cancel of \(job.id) was not saved: \(why)")
      }
    }
  }
}
