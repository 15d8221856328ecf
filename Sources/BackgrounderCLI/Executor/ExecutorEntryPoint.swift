import ArgumentParser
import BackgrounderDaemon
import Dispatch
import Glibc
import QuietExecutor

/// The process entry point. For `status` and `run` (the daemon) it installs
/// the `QuietExecutor` module's executors before any task exists, so that an idle process makes
/// no system calls at all (libdispatch's global queues run a 1 s monitor timer once used). The
/// other verbs, which end within seconds, keep Swift's standard Dispatch-based executors, and so
/// does every verb when built with a compiler older than Swift 6.3 (the custom-executor SPI is
/// new in 6.3). A synchronous command (`calendar`, `unit`, `trigger`, `expire`) and a help,
/// version or usage message need no concurrency at all: they are parsed and run on the main
/// thread, and no Dispatch worker starts. The command ends the process with `exit`. The threads of every
/// verb share one malloc arena.
@main
enum ExecutorEntryPoint {
  /// The verbs that stay running and must not wake while idle.
  static let quietVerbs = ["status", "run"]

  /// The verbs whose command is asynchronous (the others run on the main thread). Written out:
  /// asking each subcommand type whether it is an `AsyncParsableCommand` searched the binary's
  /// protocol conformances for every synchronous one (6 % of a `calendar daily`'s CPU); a test
  /// checks the list against the types. Arrays, not sets: a `Set<String>` is a generic type
  /// the runtime instantiates on first use, by that same search.
  static let asyncVerbs = [
    "status", "run", "schedule", "cancel", "doctor", "capture", "history", "logs",
  ]

  /// Whether `arguments` (the process's, program name first) are a `status` that prints once
  /// and ends: its plain form (``StatusFastStart/plainLine(_:)``) without `--watch`.
  static func isOneShotStatus(_ arguments: [String]) -> Bool {
    guard arguments.dropFirst().first == "status",
      let line = StatusFastStart.plainLine(arguments.dropFirst(2))
    else { return false }
    return !line.watch
  }

  /// Parses the command line and runs a synchronous command on the calling thread; returns
  /// only when the command is asynchronous (it is then parsed again in a task).
  static func runSynchronously() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    // Plain lines of the commands run most from scripts, without the argument parser.
    switch arguments.first {
    case "calendar":
      if let request = CalendarCommand.plainRequest(arguments.dropFirst()) {
        runAndExit { try request.run() }
      }
    case "trigger":
      if let line = PlainControlLine.parse(arguments.dropFirst()) {
        runAndExit { try TriggerCommand.run(line) }
      }
    case "expire":
      if let line = PlainControlLine.parse(arguments.dropFirst()) {
        runAndExit { try ExpireCommand.run(line) }
      }
    default:
      if let help = BackgrounderCommand.plainHelp(arguments) {
        Output.line(help)
        exit(0)
      }
    }
    let command = BackgrounderCommand.parseOrExit(arguments)
    guard !(command is AsyncParsableCommand) else { return }
    var synchronous = command
    do {
      try synchronous.run()
    } catch {
      BackgrounderCommand.exit(reporting: error)
    }
    exit(0)
  }

  /// Runs `body`, then ends the process as the argument parser's `main()` would.
  private static func runAndExit(_ body: () throws -> Void) -> Never {
    do {
      try body()
    } catch {
      BackgrounderCommand.exit(reporting: error)
    }
    exit(0)
  }

  static func main() throws {
    let verb = CommandLine.arguments.dropFirst().first
    // One malloc arena for every verb, set before any other thread exists: the daemon keeps
    // less memory idle, and a short-lived verb does not grow a heap per thread (~10 % of a
    // `status --json`'s CPU went to that).
    HeapTuning.useSingleArena()
    // The daemon reads its signals on its event loop, not through Dispatch signal sources.
    if verb == "run" { try Daemon.forwardSignals() }
    let quiet = verb.map(quietVerbs.contains) ?? false
    #if compiler(>=6.3)
      // Once quiet after some work (a burst of runs, a control request, a `status --watch`
      // update), the process gives back the memory it used: after a second of quiet, at most
      // every ten seconds.
      // A one-shot `status` (not `--watch`) runs every job on the main thread: its blocking
      // work (the netlink socket, the system bus, the store read) has threads of its own, and
      // helper threads only cost it their starts (issue #35: 7 of its 10 threads).
      if quiet {
        QuietExecutors.install(
          whenQuiet: QuietAction(
            after: .seconds(1), atMostEvery: .seconds(10), HeapTuning.releaseIdleMemorySoon),
          helperThreads: !Self.isOneShotStatus(CommandLine.arguments))
      }
    #endif
    // A verb with a synchronous command (and help, version and usage errors): parsed and run
    // on this thread, so that no Swift concurrency and no Dispatch worker starts.
    if !quiet, !(verb.map(asyncVerbs.contains) ?? false) { runSynchronously() }
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
