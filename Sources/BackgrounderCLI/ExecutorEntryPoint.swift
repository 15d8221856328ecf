import BackgrounderDaemon
import Dispatch
import Glibc

#if compiler(>=6.3)
  @_spi(ExperimentalCustomExecutors) import _Concurrency
#endif

/// The process entry point. For `status` and `run` (the daemon) it installs
/// ``QuietExecutorFactory``'s executors before any task exists, so that an idle process makes
/// no system calls at all (libdispatch's global queues run a 1 s monitor timer once used). The
/// other verbs, which end within seconds, keep Swift's standard Dispatch-based executors, and so
/// does every verb when built with a compiler older than Swift 6.3 (the custom-executor SPI is
/// new in 6.3). The command ends the process with `exit`. The daemon (`run`) also makes all its
/// threads share one malloc arena.
@main
enum ExecutorEntryPoint {
  /// The verbs that stay running and must not wake while idle.
  static let quietVerbs: Set<String> = ["status", "run"]

  static func main() throws {
    // The daemon allocates from one malloc arena (before any other thread exists).
    if CommandLine.arguments.dropFirst().first == "run" { HeapTuning.useSingleArena() }
    #if compiler(>=6.3)
      let quiet = CommandLine.arguments.dropFirst().first.map(quietVerbs.contains) ?? false
      if quiet { _createExecutors(factory: QuietExecutorFactory.self) }
    #endif
    Task.detached {
      await BackgrounderCommand.main()
      exit(0)
    }
    #if compiler(>=6.3)
      if quiet { try MainActor.executor.run() }
    #endif
    dispatchMain()
  }
}
