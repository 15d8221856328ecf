import ArgumentParser
import BackgrounderDaemon
import Foundation

/// `backgrounder logs ID [-f]`: the job's journal lines (its output and the daemon's events
/// about it), through `journalctl BACKGROUNDER_JOB=ID`.
struct LogsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "logs",
    abstract: "Show a job's journal lines (its output and the daemon's events about it).",
    discussion: """
      Runs `journalctl BACKGROUNDER_JOB=ID`: under systemd the daemon sends each line with the
      fields BACKGROUNDER_JOB, BACKGROUNDER_RUN, BACKGROUNDER_ATTEMPT and PRIORITY. Without a
      systemd journal the daemon writes plain lines to its stderr, tagged job=ID: read them
      wherever that goes.
      """
  )

  @OptionGroup var job: JobIdArgument

  @Flag(name: .customShort("f"), help: "Keep printing new lines as they arrive.")
  var follow = false

  /// Where journald listens: without it there is no journal to ask.
  static let journalSocket = "/run/systemd/journal/socket"

  func run() async throws {
    let journalctl = ["/usr/bin/journalctl", "/bin/journalctl"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let journalctl, FileManager.default.fileExists(atPath: Self.journalSocket) else {
      throw OperatorError(
        "no systemd journal on this system: the daemon writes its lines, tagged job=\(job.id), "
          + "to its stderr; read them where that goes (e.g. grep 'job=\(job.id)' on its log file)")
    }
    var arguments = ["BACKGROUNDER_JOB=\(job.id)", "--no-pager", "--output=short-iso"]
    if follow { arguments.append("--follow") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: journalctl)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    if process.terminationStatus != 0 {
      throw ExitCode(process.terminationStatus)
    }
  }
}
