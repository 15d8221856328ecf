import BackgrounderDaemon
import Dispatch
import Glibc
import QuietExecutor

/// The process entry point. For `status` and `run` (the daemon) it installs
/// the `QuietExecutor` module's executors before any task exists, so that an idle process makes
/// no system calls at all (libdispatch's global queues run a 1 s monitor timer once used). The
/// other verbs, which end within seconds, keep Swift's standard Dispatch-based executors, and so
/// does every verb when built with a compiler older than Swift 6.3 (the custom-executor SPI is
/// new in 6.3). The command ends the process with `exit`. The threads of every
/// verb share one malloc arena.
@main
enum ExecutorEntryPoint {
  /// The verbs that stay running and must not wake while idle.
  static let quietVerbs: Set<String> = ["status", "run"]

  static func main() throws {
    let verb = CommandLine.arguments.dropFirst().first
    // One malloc arena for every verb, set before any other thread exists: the daemon keeps
    // less memory idle, and a short-lived verb does not grow a heap per thread (~10 % of a
    // `status --json`'s CPU went to that).
    HeapTuning.useSingleArena()
    // The daemon reads its signals on its event loop, not through Dispatch signal sources.
    if verb == "run" { try Daemon.forwardSignals() }
    #if compiler(>=6.3)
      let quiet = verb.map(quietVerbs.contains) ?? false
      // Once quiet after some work (a burst of runs, a control request, a `status --watch`
      // update), the process gives back the memory it used: after a second of quiet, at most
      // every ten seconds.
      if quiet {
        QuietExecutors.install(
          whenQuiet: QuietAction(
            after: .seconds(1), atMostEvery: .seconds(10), HeapTuning.releaseIdleMemorySoon))
      }
    #endif
    Task.detached {
      if let status = StatusFastStart.command(CommandLine.arguments) {
        await StatusFastStart.run(status)
      } else {
        await BackgrounderCommand.main()
      }
      exit(0)
    }
    #if compiler(>=6.3)
      if quiet { try QuietExecutors.runMainLoop() }
    #endif
    dispatchMain()
  }
}
