import Backgrounder

/// Reads `metered-budget` of a `[[job]]` (`"200MB/1d"`) and `metered-budget` with `reset` of
/// `[network]` (`"2GB/30d"`, or `"2GB"` with `reset = "monthly:1"`).
enum MeteredBudgetSettings {
  /// The job key.
  static let jobKeys = ["metered-budget"]
  /// The `[network]` keys.
  static let networkKeys = ["metered-budget", "reset"]

  /// A job's budget: only a job whose `network` forbids metered links (`unmetered`) takes one.
  static func read(job: TableReader, network: JobDefinition.Network) throws(ConfigurationError)
    -> MeteredBudget?
  {
    guard let text = try job.string("metered-budget") else { return nil }
    guard network == .unmetered else {
      throw job.error(
        "metered-budget",
        "only a job with network = \"unmetered\" takes a metered budget (it lets such a job "
          + "use metered links up to the budget); this job has network = \"\(network.rawValue)\"")
    }
    do {
      return try MeteredBudget(parsing: text)
    } catch {
      throw job.error("metered-budget", error.description)
    }
  }

  /// The daemon's budget for all jobs' metered use, or nil.
  static func read(network: TableReader) throws(ConfigurationError) -> MeteredBudget? {
    var day: Int?
    if let reset = try network.string("reset") {
      do {
        day = try MeteredBudget.monthlyResetDay(parsing: reset)
      } catch {
        throw network.error("reset", error.description)
      }
    }
    guard let text = try network.string("metered-budget") else {
      if day != nil {
        throw network.error("reset", "needs `metered-budget` (the amount, such as \"2GB\")")
      }
      return nil
    }
    do {
      return try MeteredBudget(parsing: text, requireWindow: false, monthlyDay: day)
    } catch {
      throw network.error("metered-budget", error.description)
    }
  }
}
