import Glibc
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// The process entry point: installs ``QuietExecutorFactory``'s executors before any task
/// exists, starts the command on the global executor and gives the main thread to the main
/// actor's run loop. The command ends the process with `exit`.
@main
enum ExecutorEntryPoint {
  static func main() throws {
    _createExecutors(factory: QuietExecutorFactory.self)
    Task.detached {
      await BackgrounderCommand.main()
      exit(0)
    }
    try MainActor.executor.run()
  }
}
