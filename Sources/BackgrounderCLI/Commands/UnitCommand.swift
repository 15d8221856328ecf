import ArgumentParser
import BackgrounderDaemon
import Foundation

/// `backgrounder unit`: print the systemd unit for this binary.
struct UnitCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "unit",
    abstract: "Print the systemd service unit for this binary.",
    discussion: """
      ExecStart runs `backgrounder run --config FILE` with the --config given here (default: \
      the default location for a system or a --user unit). Install it with:
        backgrounder unit > /etc/systemd/system/backgrounder.service
        backgrounder unit --user > ~/.config/systemd/user/backgrounder.service
      then `systemctl [--user] daemon-reload && systemctl [--user] enable --now backgrounder`.
      """
  )

  @Flag(help: "Print the unit for a per-user service (`systemctl --user`).")
  var user = false

  @Option(help: "Path of the backgrounder binary in ExecStart (default: this binary).")
  var executable: String?

  @OptionGroup var config: ConfigOption

  func run() {
    let binary =
      executable ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
    print(
      SystemdUnits.service(user: user, executable: binary, configPath: config.config),
      terminator: "")
  }
}
