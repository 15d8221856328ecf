import ArgumentParser
import BackgrounderDaemon
import Foundation

/// `backgrounder logs ID [-f]`: the job's journal lines (its output and the daemon's events
/// about it), through `journalctl BACKGROUNDER_JOB=ID _UID=…`: only entries a daemon this user
/// can run wrote (any user can write an entry with `BACKGROUNDER_JOB=ID`; the journal sets
/// `_UID` itself).
struct LogsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "logs",
    abstract: "Show a job's journal lines (its output and the daemon's events about it).",
    discussion: """
      Runs `journalctl BACKGROUNDER_JOB=ID _UID=0 _UID=<your uid>`: under systemd the daemon
      sends each line with the fields BACKGROUNDER_JOB, BACKGROUNDER_RUN, BACKGROUNDER_ATTEMPT
      and PRIORITY, and the journal adds the sender's _UID, so a line another user wrote with a
      job's field is not shown. Without a systemd journal the daemon writes plain lines to its
      stderr, tagged job=ID: read them wherever that goes.
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
    let process = Process()
    process.executableURL = URL(fileURLWithPath: journalctl)
    process.arguments = Self.journalctlArguments(job: job.id, follow: follow, userID: geteuid())
    try process.run()
    process.waitUntilExit()
    if process.terminationStatus != 0 {
      throw ExitCode(process.terminationStatus)
    }
  }

  /// journalctl's arguments: the job's field and the `_UID` of a daemon that may have written
  /// it — root's (the system daemon) or `userID`'s (a per-user daemon); matches of one field are
  /// alternatives, of different fields all required.
  static func journalctlArguments(job: String, follow: Bool, userID: uid_t) -> [String] {
    var arguments = ["BACKGROUNDER_JOB=\(job)", "_UID=0"]
    if userID != 0 { arguments.append("_UID=\(userID)") }
    arguments += ["--no-pager", "--output=short-iso"]
    if follow { arguments.append("--follow") }
    return arguments
  }
}
