import ArgumentParser
import BackgrounderDaemon

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
}
