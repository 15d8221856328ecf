import ArgumentParser
import Glibc

/// The `backgrounder` command line: one type per subcommand, each in its own file.
/// Started by ``ExecutorEntryPoint`` (the `@main` type).
struct BackgrounderCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backgrounder",
    abstract: "Run background jobs only when the network and power allow.",
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
    do {
      var command = try parseAsRoot()
      if var asyncCommand = command as? AsyncParsableCommand {
        try await asyncCommand.run()
      } else {
        try command.run()
      }
    } catch {
      let message = fullMessage(for: error)
      let code = exitCode(for: error)
      if !message.isEmpty {
        if code == .success { Output.line(message) } else { Output.errorMessage(message) }
      }
      Glibc.exit(code.rawValue)
    }
  }
}
