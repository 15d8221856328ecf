import ArgumentParser
import BackgrounderDaemon
import Foundation

/// `backgrounder doctor`: validate the config and the environment.
struct DoctorCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "doctor",
    abstract:
      "Check the config, the job commands, the store, netlink, power_supply, units and the "
      + "running daemon's health.",
    discussion: "Prints one line per check and exits with status 1 if any problem was found."
  )

  @OptionGroup var config: ConfigOption

  @Option(help: ArgumentHelp("Root of sysfs.", valueName: "dir"))
  var sysfsRoot = "/sys"

  func run() async throws {
    let home = ProcessInfo.processInfo.environment["HOME"] ?? "/root"
    let doctor = Doctor(
      configPath: config.path, sysfsRoot: sysfsRoot,
      unitPaths: [
        SystemdUnits.installPath(user: false, home: home),
        SystemdUnits.installPath(user: true, home: home),
      ])
    var findings = doctor.run()
    let socketPath =
      (try? config.loadIfPresent())?.controlSocketPath
      ?? DefaultLocations.current().controlSocketPath
    do {
      let daemon = try await DaemonHealth.report(socketPath: socketPath)
      findings += DaemonHealth.findings(daemon)
      if daemon == nil {
        // No daemon to say how its sources answer: read NetworkManager once ourselves.
        let configuration =
          (try? config.loadIfPresent(decodingJobs: false)) ?? DaemonConfiguration(sourcePath: "")
        findings += await Doctor.networkManagerFindings(configuration.hintsConfiguration)
      }
    } catch {
      findings.append(.init(.problem, "health", "cannot ask the daemon: \(error)"))
    }
    for finding in findings { Output.line("\(finding)") }
    let problems = findings.filter { $0.severity == .problem }.count
    Output.line(problems == 0 ? "no problems found" : "\(problems) problem(s) found")
    if problems > 0 { throw ExitCode(1) }
  }
}
