import ArgumentParser

/// Starts `backgrounder status …` without building the whole command tree (issue #11:
/// `status --json` within 30 ms). The argument parser makes the argument sets of every verb
/// before it parses (to look for a completion-script request), ~7 % of a `status --json`; even
/// ``StatusCommand`` alone costs ~3 ms (its argument set is made by reflection, and each new
/// generic type scans the binary's protocol conformances). So the plain forms of the usage line
/// (`--json`, `--wide`, `--watch`, and `--sysfs-root`, `--replay`, `--config` and `--store` each followed
/// by a value) are read here; anything else goes to ``StatusCommand``'s parser, and whatever does
/// not parse cleanly there (help, completion scripts, a usage error) to the whole tree as before,
/// so its output and exit status are unchanged.
enum StatusFastStart {
  /// The `status` command of `arguments` (the process's, program name first), nil when it is
  /// not a `status` command line that ``StatusCommand`` parses without error.
  static func command(_ arguments: [String]) -> StatusCommand? {
    let verbAndArguments = arguments.dropFirst()
    guard verbAndArguments.first == StatusCommand.configuration.commandName else { return nil }
    let statusArguments = verbAndArguments.dropFirst()
    if let command = plainCommand(statusArguments) { return command }
    return (try? StatusCommand.parseAsRoot(Array(statusArguments))) as? StatusCommand
  }

  /// The values of a plain `status` line (``plainLine(_:)``), before a ``StatusCommand`` is made
  /// of them (its property wrappers cost more than reading the line).
  struct PlainLine: Equatable {
    var json = false
    var wide = false
    var watch = false
    var sysfsRoot: String?
    var replay: String?
    var config: String?
    var store: String?
  }

  /// `arguments` as ``StatusCommand`` would parse them, when each is a flag or an option
  /// followed by its value, none given twice and no value looking like an option; else nil.
  static func plainCommand(_ arguments: ArraySlice<String>) -> StatusCommand? {
    guard let line = plainLine(arguments) else { return nil }
    // Every property is set: a property wrapper made by `init()` holds only its definition.
    var command = StatusCommand()
    command.json = line.json
    command.wide = line.wide
    command.watch = line.watch
    command.sysfsRoot = line.sysfsRoot ?? StatusCommand.defaultSysfsRoot
    command.replay = line.replay
    var configOption = ConfigOption()
    configOption.config = line.config
    command.config = configOption
    command.store = line.store
    return command
  }

  /// The values of `arguments` when they are a plain `status` line (``plainCommand(_:)``).
  static func plainLine(_ arguments: ArraySlice<String>) -> PlainLine? {
    var line = PlainLine()
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      switch argument {
      case "--json" where !line.json: line.json = true
      case "--watch" where !line.watch: line.watch = true
      case "--wide" where !line.wide: line.wide = true
      case "--sysfs-root", "--replay", "--config", "--store":
        guard let value = arguments.optionValue(at: &index), !value.isEmpty else { return nil }
        switch argument {
        case "--sysfs-root" where line.sysfsRoot == nil: line.sysfsRoot = value
        case "--replay" where line.replay == nil: line.replay = value
        case "--config" where line.config == nil: line.config = value
        case "--store" where line.store == nil: line.store = value
        default: return nil
        }
      default: return nil
      }
    }
    return line
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
