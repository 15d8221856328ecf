import Glibc

/// The root command's help (`backgrounder --help`) at ``columns`` columns, the width of every
/// `--help` not printed to a terminal (and of an 80-column one): rendering it through
/// ArgumentParser reflects every subcommand's arguments, 80 % of a `--help`'s CPU (issue #35).
/// Other widths are rendered. `RootHelpTests` fails, printing the new text to paste here, when
/// a command's help no longer renders to this.
enum RootHelp {
  static let columns = 80

  static let text = """
    OVERVIEW: Run background jobs only when the network and power allow.

    USAGE: backgrounder <subcommand>

    OPTIONS:
      --version               Show the version.
      -h, --help              Show help information.

    SUBCOMMANDS:
      status                  Show network, power and task status.
      run                     Run the daemon: schedule the config's jobs and run
                              them when constraints allow.
      schedule                Schedule a command job that is not in the config file.
      cancel                  Cancel a job (a running attempt is stopped).
      trigger                 Run a job now, bypassing its constraints and backoff.
      expire                  Simulate budget expiry of a running job.
      doctor                  Check the config, the job commands, the store,
                              netlink, power_supply, units and the running daemon's
                              health.
      capture                 Record the rtnetlink messages the monitor sees as a
                              pcapng file.
      unit                    Print the systemd service unit for this binary.
      calendar                Show the normalized form and next elapses of calendar
                              expressions.
      history                 Show a job's stored runs, newest first.
      logs                    Show a job's journal lines (its output and the
                              daemon's events about it).

      See 'backgrounder help <subcommand>' for detailed help.
    """

  /// The width ArgumentParser wraps help at: `COLUMNS` (`columnsVariable`) when it is a
  /// number, else the terminal on standard output, else 80.
  static func screenWidth(
    columnsVariable: String? = getenv("COLUMNS").map { String(cString: $0) }
  ) -> Int {
    if let columns = columnsVariable.flatMap({ Int($0) }) { return columns }
    var size = winsize()
    if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
      return Int(size.ws_col)
    }
    return 80
  }
}
