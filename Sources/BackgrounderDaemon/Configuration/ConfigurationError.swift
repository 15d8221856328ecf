/// A problem in a config file, located by file, line and key. The loader reports every problem
/// of a file at once (up to ``ConfigurationLoader/problemLimit``): the first is this error's own
/// fields, the rest are ``others``.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
  /// The config file.
  package var file: String
  /// 1-based line of the offending key or syntax error, when known.
  package var line: Int?
  /// 1-based column of a syntax error, when known.
  package var column: Int?
  /// Dotted key path such as `job[2].every`, when the problem is about a key.
  package var key: String?
  /// What is wrong, in words.
  package var message: String
  /// The id of the `[[job]]` the problem is in, when that job has one: messages name the job
  /// by it (`job "dev.example.backup": every: …`) rather than by its index.
  package var job: String?
  /// The file's further problems, in file order.
  package var others: [ConfigurationError] = []
  /// How many more problems were found beyond the reported ones.
  package var omitted = 0

  package init(
    file: String, line: Int?, column: Int? = nil, key: String?, message: String,
    job: String? = nil
  ) {
    self.file = file
    self.line = line
    self.column = column
    self.key = key
    self.message = message
    self.job = job
  }

  /// Every reported problem, this one first, each on its own (no ``others``).
  package var problems: [ConfigurationError] {
    var first = self
    first.others = []
    first.omitted = 0
    return [first] + others
  }

  /// One line per problem (`file:line: job "ID": key: message`), then how many were left out.
  public var description: String {
    var lines = problems.map(\.problemLine)
    if omitted > 0 {
      lines.append("\(file): \(omitted) more problem(s) not shown; fix these and check again")
    }
    return lines.joined(separator: "\n")
  }

  /// This problem alone, as one line.
  private var problemLine: String {
    var location = line.map { "\(file):\($0)" } ?? file
    if line != nil, let column { location += ":\(column)" }
    guard let key else { return "\(location): \(message)" }
    return "\(location): \(Self.subject(key: key, job: job)): \(message)"
  }

  /// `key`, with a leading `job[N]` written as `job "ID"` when the job's id is known.
  private static func subject(key: String, job: String?) -> String {
    guard let job, key.hasPrefix("job["), let close = key.firstIndex(of: "]") else { return key }
    var rest = key[key.index(after: close)...]
    if rest.hasPrefix(".") { rest = rest.dropFirst() }
    let name = "job \"\(job)\""
    return rest.isEmpty ? name : "\(name): \(rest)"
  }
}

/// The problems found so far in one file, for the loader to report at once: it reads on past
/// a problem (an unknown key is recorded and skipped; a bad value ends the reading of its
/// table or job) to find the next.
final class ConfigurationProblems {
  private(set) var found: [ConfigurationError] = []
  private(set) var omitted = 0
  let limit: Int

  init(limit: Int) { self.limit = limit }

  /// No more will be reported.
  var isFull: Bool { found.count >= limit }

  func record(_ error: ConfigurationError) {
    for problem in error.problems {
      if isFull { omitted += 1 } else { found.append(problem) }
    }
    omitted += error.omitted
  }

  /// The result of `body`, or nil with its error recorded.
  @discardableResult
  func collect<T>(_ body: () throws(ConfigurationError) -> T) -> T? {
    do {
      return try body()
    } catch {
      record(error)
      return nil
    }
  }

  /// Throws every recorded problem as one error, in file order.
  func throwIfAny() throws(ConfigurationError) {
    guard !found.isEmpty else { return }
    // File order; a problem without a line (the file as a whole) first. Stable for one line.
    let ordered = found.enumerated().sorted { a, b in
      (a.element.line ?? 0, a.offset) < (b.element.line ?? 0, b.offset)
    }.map(\.element)
    var error = ordered[0]
    error.others = Array(ordered.dropFirst())
    error.omitted = omitted
    throw error
  }
}
