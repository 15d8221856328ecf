import Dispatch
import Glibc
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// The process entry point. For `status` it installs ``QuietExecutorFactory``'s executors before
/// any task exists, so that an idle `status --watch` makes no syscalls at all (libdispatch's
/// global queues run a 1 s monitor timer once used). Every other verb — the daemon above all —
/// keeps Swift's standard Dispatch-based executors. The command ends the process with `exit`.
@main
enum ExecutorEntryPoint {
  static func main() throws {
    let quiet = CommandLine.arguments.dropFirst().first == "status"
    if quiet { _createExecutors(factory: QuietExecutorFactory.self) }
    Task.detached {
      await BackgrounderCommand.main()
      exit(0)
    }
    if quiet {
      try MainActor.executor.run()
    } else {
      dispatchMain()
    }
  }
}
