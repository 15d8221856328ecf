import ArgumentParser
import Backgrounder
import BackgrounderDaemon
import Foundation

/// `backgrounder logs ID [-f]`: the job's journal lines (its output and the daemon's events
/// about it), through `journalctl BACKGROUNDER_JOB=ID`.
struct LogsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "logs",
    abstract: "Show a job's journal lines (its output and the daemon's events about it).",
    discussion: """
      Runs `journalctl BACKGROUNDER_JOB=ID`: under systemd the daemon sends each line with the \
      fields BACKGROUNDER_JOB, BACKGROUNDER_RUN, BACKGROUNDER_ATTEMPT and PRIORITY.

      Without a systemd journal, prints the output the store keeps of the job's recent runs \
      (the last 20 lines of each, as `backgrounder history ID` shows them with their outcomes).
      """
  )

  @OptionGroup var job: JobIdArgument

  @Flag(name: .customShort("f"), help: "Keep printing new lines as they arrive (journal only).")
  var follow = false

  @OptionGroup var config: ConfigOption

  /// Where journald listens: without it there is no journal to ask.
  static let journalSocket = "/run/systemd/journal/socket"

  func run() async throws {
    let journalctl = ["/usr/bin/journalctl", "/bin/journalctl"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let journalctl, FileManager.default.fileExists(atPath: Self.journalSocket) else {
      return try printStoredOutput()
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

  /// Without a journal: the output tails the store keeps, oldest run first (as a log reads).
  private func printStoredOutput() throws {
    if follow {
      throw OperatorError(
        "no systemd journal on this system: -f needs one; `backgrounder history \(job.id)` "
          + "shows the output the store keeps of each run")
    }
    Output.warning(
      "no systemd journal on this system: showing the output the store keeps of \(job.id)'s "
        + "recent runs (`backgrounder history \(job.id)` shows their outcomes)")
    let task = try HistoryCommand.storedTask(job.id, config: config, store: nil, limit: 20)
    for line in Self.storedOutput(of: task) { Output.line(line) }
  }

  /// The output tails of `task`'s stored runs, oldest first, each under a line naming the run.
  static func storedOutput(of task: TaskStatus) -> [String] {
    let withOutput = task.recentRuns.filter { !($0.outputTail ?? "").isEmpty }
    if withOutput.isEmpty { return ["no run of \(task.id) has stored output"] }
    var lines: [String] = []
    for record in withOutput.reversed() {
      let tail = record.outputTail ?? ""
      let started = record.startedAt ?? record.endedAt
      lines.append(
        "-- run of \(HumanText.time(started)), attempt \(record.attempt): \(record.outcome) --")
      // The command's own output: the one place this verb prints outside text.
      lines.append(tail.hasSuffix("\n") ? String(tail.dropLast()) : tail)
    }
    return lines
  }
}
