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
      Runs `journalctl BACKGROUNDER_JOB=ID _UID=<the daemon's uid>` (and _SYSTEMD_UNIT=<its
      unit> when it runs under one; with no daemon running, _UID=0 or your uid): under systemd
      the daemon sends each line with the fields BACKGROUNDER_JOB, BACKGROUNDER_RUN,
      BACKGROUNDER_ATTEMPT and PRIORITY, and the journal adds the sender's _UID and unit, so a
      line another user wrote with a job's field is not shown. Without a systemd journal the
      daemon writes plain lines to its stderr, tagged job=ID: read them wherever that goes.
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
    let daemon = DaemonSection(socketPath: DefaultLocations.current().controlSocketPath).read()
    process.arguments = Self.journalctlArguments(
      job: job.id, follow: follow, userID: geteuid(),
      daemon: daemon.pid.flatMap(JournalIdentity.init(pid:)))
    try process.run()
    process.waitUntilExit()
    if process.terminationStatus != 0 {
      throw ExitCode(process.terminationStatus)
    }
  }

  /// journalctl's arguments: the job's field, and who wrote it — the running `daemon`'s `_UID`
  /// and unit when it answered, else root's (the system daemon) or `userID`'s (a per-user
  /// daemon). Matches of one field are alternatives, of different fields all required.
  static func journalctlArguments(
    job: String, follow: Bool, userID: uid_t, daemon: JournalIdentity? = nil
  ) -> [String] {
    var arguments = ["BACKGROUNDER_JOB=\(job)"]
    if let daemon {
      arguments.append("_UID=\(daemon.uid)")
      if let unit = daemon.unit {
        arguments.append((daemon.isUserUnit ? "_SYSTEMD_USER_UNIT=" : "_SYSTEMD_UNIT=") + unit)
      }
    } else {
      arguments.append("_UID=0")
      if userID != 0 { arguments.append("_UID=\(userID)") }
    }
    arguments += ["--no-pager", "--output=short-iso"]
    if follow { arguments.append("--follow") }
    return arguments
  }
}

/// The running daemon as the journal knows its entries: the user it runs as (`_UID`) and,
/// under systemd, its unit (`_SYSTEMD_UNIT`, or `_SYSTEMD_USER_UNIT` under a user manager).
struct JournalIdentity: Equatable {
  var uid: uid_t
  var unit: String?
  var isUserUnit = false

  /// The identity of process `pid` (the daemon's, as it answered on the control socket): the
  /// owner of `/proc/PID` and the unit in its cgroup; nil when it cannot be read.
  init?(pid: Int32) {
    var status = stat()
    guard pid > 0, stat("/proc/\(pid)", &status) == 0 else { return nil }
    uid = status.st_uid
    let cgroup = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)
    (unit, isUserUnit) = cgroup.flatMap(Self.unit(inCgroup:)) ?? (nil, false)
  }

  init(uid: uid_t, unit: String? = nil, isUserUnit: Bool = false) {
    self.uid = uid
    self.unit = unit
    self.isUserUnit = isUserUnit
  }

  /// The unit of a `/proc/PID/cgroup` text: the innermost `.service` of the cgroup2 (`0::`)
  /// path (the daemon may sit in a sub-cgroup of its unit), a user unit when it is under a
  /// `user@UID.service`; nil outside any service.
  static func unit(inCgroup text: String) -> (name: String, isUser: Bool)? {
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else {
      return nil
    }
    let components = line.dropFirst(3).split(separator: "/")
    guard let index = components.lastIndex(where: { $0.hasSuffix(".service") }) else {
      return nil
    }
    let isUser = components[..<index].contains { $0.hasPrefix("user@") }
    return (String(components[index]), isUser)
  }
}
