import Foundation
import TestSupport
import Testing

/// `backgrounder calendar` as users run it (the real binary, `TZ` in its environment) against
/// `systemd-analyze calendar` given the same arguments and `TZ`.
@Suite(.blockingIO, .timeLimit(.minutes(3)))
struct CalendarCommandTests {
  private struct Entry: Decodable {
    var expression: String
    var normalized: String
    var next: [String]
  }

  private struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  private static func run(_ path: String, _ arguments: [String], tz: String) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ["TZ": tz, "PATH": "/usr/bin:/bin", "SYSTEMD_COLORS": "0"]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let stdout = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
      stderr: String(decoding: stderr, as: UTF8.self))
  }

  /// systemd's "(in UTC)" times (or the elapse lines themselves when TZ is UTC), in seconds.
  private static func systemdElapses(_ output: String) -> [Int64] {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "EEE yyyy-MM-dd HH:mm:ss 'UTC'"
    return output.split(separator: "\n").compactMap { line in
      let text = line.trimmingCharacters(in: .whitespaces)
      guard text.hasPrefix("(in UTC): ") else { return nil }
      return formatter.date(from: String(text.dropFirst(10))).map {
        Int64($0.timeIntervalSince1970)
      }
    }
  }

  @Test(
    "the same elapses as systemd-analyze across DST changes, with TZ as a name or ':name'",
    arguments: [
      ("Europe/Berlin", "@1711843200"), (":America/New_York", "@1730606400"),
      ("Australia/Lord_Howe", "@1712412000"), ("Europe/Berlin", "2024-10-27 01:30 UTC"),
    ])
  func matchesSystemdAnalyze(tz: String, base: String) throws {
    let binary = try DaemonBinary.path()
    for expression in ["*:00/20", "*-*-* 02:30", "Sat,Sun 1..3:15", "*-*~1 02:45 UTC"] {
      let ours = try Self.run(
        binary, ["calendar", "--json", "--iterations", "4", "--base-time", base, expression],
        tz: tz)
      #expect(ours.status == 0, "\(ours.stderr)")
      let entries = try JSONDecoder().decode([Entry].self, from: Data(ours.stdout.utf8))
      let theirs = try Self.run(
        "/usr/bin/systemd-analyze",
        ["calendar", "--iterations=4", "--base-time=\(base)", expression], tz: tz)
      #expect(theirs.status == 0, "\(theirs.stderr)")
      let parser = ISO8601DateFormatter()
      let ourElapses = entries.first?.next.compactMap {
        parser.date(from: $0).map { Int64($0.timeIntervalSince1970) }
      }
      #expect(entries.map(\.expression) == [expression])
      #expect(
        ourElapses == Self.systemdElapses(theirs.stdout),
        "TZ=\(tz) --base-time '\(base)' '\(expression)': \(ours.stdout) vs \(theirs.stdout)")
      #expect(theirs.stdout.contains("Normalized form: \(entries.first?.normalized ?? "-")"))
    }
  }

  @Test("an invalid expression: exit status 1, named on stderr, the valid ones still printed")
  func invalidExpression() throws {
    let result = try Self.run(
      try DaemonBinary.path(),
      ["calendar", "--json", "--base-time", "@0", "daily", "Mon..Funday 02:00"], tz: "UTC")
    #expect(result.status == 1)
    #expect(result.stderr.contains("'Mon..Funday 02:00'") && result.stderr.contains("Funday"))
    let entries = try JSONDecoder().decode([Entry].self, from: Data(result.stdout.utf8))
    #expect(entries.map(\.next) == [["1970-01-02T00:00:00+00:00"]])
  }

  /// The documented examples (docs/calendar.md) and a corpus of our own, one invalid among them.
  private static let layoutCorpus = [
    "*-*-* 02:00", "02:00", "Mon..Fri *-*-* 02:00", "Mon-Fri 02:00", "Mon,Wed,Fri 02:00",
    "Sat..Sun 02:00", "Sat,Sun 08..20:00", "*:0/15", "Mon *-*-1..7 03:00", "*-*~1",
    "*-02~1 12:00", "*-*~7/2", "2024..2026-12-31 23:59:59", "*:*:0/7.5",
    "*-*-* 02:30 Europe/Berlin", "12:00 UTC", "@1900000000", "daily", "weekly", "monthly",
    "hourly", "minutely", "quarterly", "semiannually", "yearly", "*:00/20",
    "*-*-* 00:00:00", "Sat 2020-01-04 11:00", "Mon..Funday 02:00", "*-*~1 03:00 Europe/Berlin",
    "Fri *-*-13 13:13", "*-*-* 02:30", "*-*-1,15 12:00", "2030-02-29", "*:59:59.5",
  ]

  /// `text` with the value of each "From now:" line masked: systemd counts it from the real
  /// now (also with --base-time), which moves between the two runs.
  private static func maskingFromNow(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      line.hasPrefix("       From now: ") ? "       From now: …" : String(line)
    }.joined(separator: "\n")
  }

  @Test(
    "the human output is systemd-analyze calendar's, line for line",
    arguments: ["UTC", "Etc/UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"])
  func humanOutputMatchesSystemdAnalyze(tz: String) throws {
    let binary = try DaemonBinary.path()
    let base = "2024-03-29 12:00:00 UTC"
    let ours = try Self.run(
      binary, ["calendar", "--iterations", "3", "--base-time", base] + Self.layoutCorpus, tz: tz)
    let theirs = try Self.run(
      "/usr/bin/systemd-analyze",
      ["calendar", "--iterations=3", "--base-time=\(base)"] + Self.layoutCorpus, tz: tz)
    #expect(ours.status == 1 && theirs.status != 0, "one expression is invalid")
    let (left, right) = (Self.maskingFromNow(ours.stdout), Self.maskingFromNow(theirs.stdout))
    let (leftLines, rightLines) = (left.split(separator: "\n"), right.split(separator: "\n"))
    for (index, (a, b)) in zip(leftLines, rightLines).enumerated() where a != b {
      Issue.record("TZ=\(tz) line \(index + 1): ours \"\(a)\", systemd \"\(b)\"")
      break
    }
    #expect(left == right, "TZ=\(tz)")
    #expect(ours.stdout.contains("From now: "))
  }
}
