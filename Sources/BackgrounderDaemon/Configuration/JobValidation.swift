import Backgrounder

/// The rules a job definition must satisfy, whether it comes from the config file or from
/// `backgrounder schedule` flags.
public enum JobValidation {
  /// The first rule `job` breaks, as the config key it concerns and what is wrong; nil if none.
  /// `calendarParsed`: the caller made `job`'s calendar expressions by parsing them (the config
  /// reader, which names the element that fails), so they are not parsed again here.
  public static func problem(with job: JobDefinition, calendarParsed: Bool = false) -> (
    key: String, message: String
  )? {
    do {
      _ = try TaskId(job.id)
    } catch {
      return ("id", "\(error)")
    }
    guard let program = job.command.first, !program.isEmpty else {
      return ("command", "must name a program as its first element")
    }
    if let problem = nulProblem(with: job) { return problem }
    switch job.schedule {
    case .every(let every, let flex):
      if every < .seconds(60) { return ("every", "must be at least 1m") }
      if let flex, flex <= .zero || flex >= every {
        return ("flex", "must be greater than 0 and less than `every`")
      }
    case .once(let delay):
      if delay < .zero { return ("delay", "must not be negative") }
    case .calendar(let expressions):
      if expressions.isEmpty { return ("calendar", "needs at least one calendar expression") }
      for expression in expressions where !calendarParsed {
        do {
          _ = try CalendarEvent(expression)
        } catch {
          return ("calendar", error.description)
        }
      }
    }
    if let problem = JobTimingValidation.problem(with: job) { return problem }
    // Bytes, as the kernel splits `NAME=value`: a combining mark after `=` hides it from
    // a Character search.
    if let name = job.environment.keys.filter({
      $0.isEmpty || $0.utf8.contains(UInt8(ascii: "=")) || $0.utf8.contains(0)
    }).min() {
      return ("environment", "invalid variable name \"\(name)\" (empty, or contains = or NUL)")
    }
    if let problem = PlaceKeys.problem(with: job) { return problem }
    if let problem = PauseKeys.problem(with: job) { return problem }
    if let problem = IdleKeys.problem(with: job) { return problem }
    if let budget = job.budget, budget < .seconds(1) { return ("budget", "must be at least 1s") }
    let backoff = job.backoff
    if backoff.initial < .seconds(10) || backoff.initial > .seconds(5 * 3600) {
      return ("backoff.initial", "must be between 10s and 5h")
    }
    if !(1...30).contains(backoff.maxAttempts) {
      return ("backoff.max-attempts", "must be between 1 and 30, got \(backoff.maxAttempts)")
    }
    if !(0...1).contains(backoff.jitter) {
      return ("backoff.jitter", "must be between 0 and 1, got \(backoff.jitter)")
    }
    return nil
  }

  /// The first argv element, environment value or path of `job` holding a NUL, which the C
  /// string handed to the kernel would silently end at (the config refuses it when read; a
  /// request on the control socket is checked here).
  private static func nulProblem(with job: JobDefinition) -> (key: String, message: String)? {
    let message = "must not contain NUL (\\u0000): the value would be cut short there"
    if let index = job.command.firstIndex(where: { $0.utf8.contains(0) }) {
      return ("command[\(index)]", message)
    }
    if let name = job.environment.filter({ $0.value.utf8.contains(0) }).keys.min() {
      return ("environment.\(name)", message)
    }
    let paths: [(String, String?)] = [
      ("working-directory", job.workingDirectory), ("requires-mount", job.requiresMount),
      ("requires-reachable", job.requiresReachable),
    ]
    if let (key, _) = paths.first(where: { $0.1?.utf8.contains(0) == true }) {
      return (key, message)
    }
    for (key, values) in [("ssids", job.ssids), ("interfaces", job.interfaces)] {
      if let index = values?.firstIndex(where: { $0.utf8.contains(0) }) {
        return ("\(key)[\(index)]", message)
      }
    }
    return nil
  }
}
