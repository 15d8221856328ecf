import Backgrounder
import Testing

@testable import BackgrounderDaemon

/// `metered-budget` of a job, `metered-budget` and `reset` of `[network]`: values and errors
/// that name the key.
@Suite struct MeteredBudgetConfigTests {
  private let locations = DefaultLocations(
    configPath: "/cfg/config.toml", storePath: "/state/default.sqlite",
    controlSocketPath: "/run/test/control.sock")

  private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
    try ConfigurationLoader.parse(text, path: "test.toml", locations: locations)
  }

  @Test func jobBudgetIsReadInDecimalUnits() throws {
    let job = try parseJob(
      id: "dev.example.sync", "network = \"unmetered\"\nmetered-budget = \"200MB/1d\"")
    #expect(
      job?.meteredBudget == MeteredBudget(bytes: 200_000_000, window: .trailing(seconds: 86_400)))
    let hourly = try parseJob(
      id: "dev.example.sync", "network = \"unmetered\"\nmetered-budget = \"1.5GB/12h\"")
    #expect(
      hourly?.meteredBudget
        == MeteredBudget(bytes: 1_500_000_000, window: .trailing(seconds: 43_200)))
    guard case .periodic(let request) = try JobRequests.request(for: #require(job), origin: .config)
    else {
      Issue.record("not periodic")
      return
    }
    #expect(request.constraints.meteredBudget?.bytes == 200_000_000)
  }

  @Test(arguments: [
    ("200/1d", "needs a unit"), ("200MiB/1d", "needs a unit"), ("200MB", "missing the window"),
    ("200MB/1w", "hours or days"), ("0MB/1d", "more than 0"), ("xMB/1d", "is not a number"),
    ("200MB/0d", "is not a window"), ("200MB/400d", "at most 366 days"),
    ("200MB/1d/2d", "AMOUNT/WINDOW"),
  ])
  func badJobBudgetsNameTheKey(text: String, message: String) {
    #expect {
      try parseJob(id: "dev.example.sync", "network = \"unmetered\"\nmetered-budget = \"\(text)\"")
    } throws: { error in
      "\(error)".contains("metered-budget") && "\(error)".contains(message)
        && "\(error)".contains(text)
    }
  }

  @Test func aBudgetOnAJobThatMayUseMeteredLinksIsRefused() {
    #expect {
      try parseJob(id: "dev.example.sync", "network = \"any\"\nmetered-budget = \"200MB/1d\"")
    } throws: { error in
      "\(error)".contains("metered-budget") && "\(error)".contains("network = \"unmetered\"")
    }
  }

  @Test func networkBudgetTrailingOrMonthly() throws {
    let trailing = try parse("[network]\nmetered-budget = \"2GB/30d\"\n")
    #expect(
      trailing.meteredBudget
        == MeteredBudget(bytes: 2_000_000_000, window: .trailing(seconds: 30 * 86_400)))
    let monthly = try parse("[network]\nmetered-budget = \"2GB\"\nreset = \"monthly:31\"\n")
    #expect(monthly.meteredBudget == MeteredBudget(bytes: 2_000_000_000, window: .monthly(day: 31)))
    #expect(try parse("[network]\nmetered = [\"ww*\"]\n").meteredBudget == nil)
  }

  @Test(arguments: [
    ("metered-budget = \"2GB\"", "metered-budget", "reset = \"monthly:DAY\""),
    ("metered-budget = \"2GB/30d\"\nreset = \"monthly:1\"", "metered-budget", "no trailing window"),
    ("metered-budget = \"2GB\"\nreset = \"monthly:32\"", "reset", "from 1 to 31"),
    ("metered-budget = \"2GB\"\nreset = \"weekly\"", "reset", "monthly:DAY"),
    ("reset = \"monthly:1\"", "reset", "needs `metered-budget`"),
    ("metered-budget = \"2 TB/30d\"", "metered-budget", "KB, MB or GB"),
  ])
  func badNetworkBudgetsNameTheKey(keys: String, key: String, message: String) {
    #expect {
      try parse("[network]\n\(keys)\n")
    } throws: { error in
      "\(error)".contains("network.\(key)") && "\(error)".contains(message)
    }
  }

  /// `doctor` says how budgets count bytes (the link's counters, not per run) when one is set.
  @Test func doctorSaysHowBudgetsCountBytes() throws {
    let doctor = Doctor(configPath: "/nonexistent.toml", unitPaths: [])
    let job = """
      [[job]]
      id = "dev.example.sync"
      command = ["/bin/true"]
      every = "1h"
      network = "unmetered"
      """
    #expect(doctor.checkByteAccounting(try parse(job)) == nil, "no budget, nothing to say")
    let own = try #require(
      doctor.checkByteAccounting(try parse(job + "\nmetered-budget = \"1MB/1d\"")))
    #expect(own.severity == .note)
    #expect(
      own.message.hasPrefix(
        "the metered budget of dev.example.sync counts each run's own bytes in the kernel"))
    #expect(own.message.contains("(accounting \"link\")"))
    let shared = try #require(
      doctor.checkByteAccounting(try parse("[network]\nmetered-budget = \"2GB/30d\"\n" + job)))
    #expect(shared.message.hasPrefix("the daemon's metered budget (every job's runs) counts"))
  }
}
