import Foundation

/// systemd's own calendar implementation, through `systemd-analyze calendar`: what it prints
/// for each expression at one base time in one zone (`TZ`).
enum SystemdAnalyzeCalendar {
  static let path = "/usr/bin/systemd-analyze"

  /// systemd's answer for one expression: rejected, no answer (its search did not settle), or
  /// its normalized form and elapses (in whole seconds since 1970, as it prints them).
  enum Answer: Equatable, CustomStringConvertible {
    case rejected
    case unresolved
    case accepted(normalized: String, elapses: [Int64])

    var description: String {
      switch self {
      case .rejected: "rejected"
      case .unresolved: "no answer (infinite loop in calendar calculation)"
      case .accepted(let normalized, let elapses): "\(normalized) \(elapses)"
      }
    }
  }

  static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

  /// Runs `systemd-analyze calendar --iterations=N --base-time=@T EXPR…` with `TZ=zone`.
  static func answers(
    _ expressions: [String], zone: String, baseSeconds: Int64, iterations: Int
  ) throws -> [String: Answer] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments =
      ["calendar", "--iterations=\(iterations)", "--base-time=@\(baseSeconds)"] + expressions
    process.environment = ["TZ": zone, "SYSTEMD_COLORS": "0", "LC_ALL": "C", "PATH": "/usr/bin"]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // Its errors are a line per rejected expression, far less than a pipe holds.
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return try parse(
      expressions, output: String(decoding: outputData, as: UTF8.self),
      errors: String(decoding: errorData, as: UTF8.self))
  }

  private static func parse(
    _ expressions: [String], output: String, errors: String
  ) throws -> [String: Answer] {
    let rejected = quoted(errors, after: "Failed to parse calendar specification '")
    let unresolved = quoted(errors, after: "Failed to determine next elapse for '")
    var answers: [String: Answer] = [:]
    for expression in expressions where rejected.contains(expression) {
      answers[expression] = .rejected
    }
    // An expression whose elapses systemd could not compute prints no block at all.
    for expression in expressions where unresolved.contains(expression) {
      answers[expression] = .unresolved
    }
    let accepted = expressions.filter { answers[$0] == nil }
    // "Original form:" is left out when it equals the normalized form.
    let blocks = output.components(separatedBy: "Normalized form: ").dropFirst()
    guard blocks.count == accepted.count else {
      throw OracleError("expected \(accepted.count) answers, got \(blocks.count): \(errors)")
    }
    for (expression, block) in zip(accepted, blocks) {
      answers[expression] = try answer(block)
    }
    return answers
  }

  /// The quoted expressions of the error lines starting with `prefix`.
  private static func quoted(_ errors: String, after prefix: String) -> Set<String> {
    Set(
      errors.split(separator: "\n").compactMap { line -> String? in
        guard line.hasPrefix(prefix), let end = line.range(of: "': ", options: .backwards)
        else { return nil }
        return String(line[line.index(line.startIndex, offsetBy: prefix.count)..<end.lowerBound])
      })
  }

  private static func answer(_ block: String) throws -> Answer {
    let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    guard let normalized = lines.first else { throw OracleError("no normalized form") }
    var elapses: [Int64] = []
    for (index, line) in lines.enumerated()
    where line.hasPrefix("Next elapse: ") || line.hasPrefix("Iter. #") {
      guard !line.hasSuffix("never") else { break }
      let utcLine =
        index + 1 < lines.count && lines[index + 1].hasPrefix("(in UTC): ")
        ? lines[index + 1] : line
      elapses.append(try seconds(utcLine))
    }
    return .accepted(
      normalized: normalized, elapses: elapses)
  }

  /// "… Wed 2023-11-15 01:00:00 UTC" → seconds since 1970.
  private static func seconds(_ line: String) throws -> Int64 {
    let words = line.split(separator: " ")
    guard words.count >= 3, words.last == "UTC" else { throw OracleError("not UTC: \(line)") }
    let date = words[words.count - 3].split(separator: "-").compactMap { Int($0) }
    let time = words[words.count - 2].split(separator: ":").compactMap { Int($0) }
    guard date.count == 3, time.count == 3 else { throw OracleError("no time in \(line)") }
    var components = DateComponents(
      timeZone: TimeZone(identifier: "UTC"), year: date[0], month: date[1], day: date[2],
      hour: time[0], minute: time[1], second: time[2])
    components.calendar = Calendar(identifier: .gregorian)
    guard let parsed = components.date else { throw OracleError("bad time in \(line)") }
    return Int64(parsed.timeIntervalSince1970)
  }

  struct OracleError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }
}
