import ArgumentParser

/// Starts `backgrounder status …` without building the whole command tree (issue #11:
/// `status --json` within 30 ms). The argument parser makes the argument sets of every verb
/// before it parses (to look for a completion-script request), ~7 % of a `status --json`; parsed
/// by ``StatusCommand`` alone, the same arguments cost a fraction of that. Anything that does not
/// parse cleanly there (help, completion scripts, a usage error) goes to the whole tree as
/// before, so its output and exit status are unchanged.
enum StatusFastStart {
  /// The `status` command of `arguments` (the process's, program name first), nil when it is
  /// not a `status` command line that ``StatusCommand`` parses without error.
  static func command(_ arguments: [String]) -> StatusCommand? {
    let verbAndArguments = arguments.dropFirst()
    guard verbAndArguments.first == StatusCommand.configuration.commandName else { return nil }
    return (try? StatusCommand.parseAsRoot(Array(verbAndArguments.dropFirst()))) as? StatusCommand
  }

  /// Runs `command`; an error ends the process as `BackgrounderCommand.main()` would end it.
  static func run(_ command: StatusCommand) async {
    do {
      try await command.run()
    } catch {
      BackgrounderCommand.exit(withError: error)
    }
  }
}
