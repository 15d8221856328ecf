import ArgumentParser
import BackgrounderDaemon
import Glibc

/// The `backgrounder` command line: one type per subcommand, each in its own file.
/// Started by ``ExecutorEntryPoint`` (the `@main` type).
struct BackgrounderCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backgrounder",
    abstract: "Run background jobs only when the network and power allow.",
    // The version the daemon reports (`status --json`'s daemon section): one constant.
    version: DaemonInfo.version,
    subcommands: [
      StatusCommand.self,
      RunCommand.self,
      ScheduleCommand.self,
      CancelCommand.self,
      TriggerCommand.self,
      ExpireCommand.self,
      DoctorCommand.self,
      CaptureCommand.self,
      UnitCommand.self,
      CalendarCommand.self,
      HistoryCommand.self,
      LogsCommand.self,
    ]
  )

  /// ArgumentParser's own `main()`, except that an error's message — which may quote the
  /// config, the store or the daemon's answer — leaves escaped for the terminal, as all
  /// human output does (``Output``).
  static func main() async {
    var command = parseOrExit()
    do {
      if var asyncCommand = command as? AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
    } catch {
      exit(reporting: error)
    }
  }

  /// The parsed command line; a usage error, a help or a version request ends the process
  /// here (with its message), on the calling thread.
  static func parseOrExit(_ arguments: [String]? = nil) -> any ParsableCommand {
    do {
      return try parseAsRoot(arguments)
    } catch {
      exit(reporting: error)
    }
  }

  /// The root command's help for a command line that asks only for it (`--help`, `-h`,
  /// `help`), without parsing it: parsing first looks for a completion-script request, which
  /// reflects every argument of the root command (about a fifth of a `--help`'s CPU, issue
  /// #35); at 80 columns the text is ``RootHelp/text``, not rendered. It is the one parsing
  /// would print (a test compares them); nil for any other command line.
  static func plainHelp(_ arguments: [String], width: Int = RootHelp.screenWidth()) -> String? {
    guard arguments.count == 1, ["--help", "-h", "help"].contains(arguments[0]) else {
      return nil
    }
    return width == RootHelp.columns ? RootHelp.text : helpMessage(columns: width)
  }

  /// Ends the process as ArgumentParser would for `error`, its message escaped (``Output``).
  static func exit(reporting error: any Error) -> Never {
    let message = fullMessage(for: error)
    let code = exitCode(for: error)
    if !message.isEmpty {
      if code == .success { Output.line(message) } else { Output.errorMessage(message) }
    }
    Glibc.exit(code.rawValue)
  }
}
