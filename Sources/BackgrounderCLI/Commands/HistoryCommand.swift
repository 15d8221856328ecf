import ArgumentParser
import Backgrounder
import BackgrounderDaemon
import Foundation

/// `backgrounder history ID [-n N] [--json]`: a job's stored runs, newest first, read
/// read-only from the store (no daemon needed).
struct HistoryCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "history",
    abstract: "Show a job's stored runs, newest first.",
    discussion: """
      Each run: when it started and ended, how long it took, the attempt, the outcome \
      (success, failure, retry, deferred, expired, interrupted, stopped, skipped) and the \
      reason, which for a failing command carries the end of its standard error; the \
      conditions the run started under (link, metered, connectivity, power), how a stopped \
      run ended ("stopped with SIGINT", "killed with SIGKILL after 30 s") and the tail of its \
      output (the last 20 lines, at most 4 KiB) for runs recorded since they are kept.

      A run whose bytes were counted shows them: sent, received, and how much of it crossed \
      metered links: the run's own packets, counted by the kernel on its cgroup (accounting \
      "cgroup"), or, where runs have no cgroup v2 of their own, the primary link's counters \
      over the run (accounting "link": approximate, other traffic on the link counts too). In \
      JSON: "bytes" and "meteredBytes" ({"sent": N, "received": N}) and "accounting" \
      ("cgroup" or "link"); all three are null for a run without counted bytes (it never \
      started, or it was recorded before bytes were counted).

      Read read-only from the store (safe while the daemon runs). The store keeps the newest \
      20 runs of each job.
      """
  )

  @OptionGroup var job: JobIdArgument

  @Option(
    name: .customShort("n"), help: ArgumentHelp("Show at most this many runs.", valueName: "n"))
  var count = 20

  @Flag(help: "Print one JSON document.")
  var json = false

  @OptionGroup var config: ConfigOption

  @Option(
    help: ArgumentHelp(
      "The store to read runs from (default: from the config).", valueName: "file"))
  var store: String?

  func validate() throws {
    guard count > 0 else { throw ValidationError("-n must be at least 1") }
  }

  func run() async throws {
    let task = try Self.storedTask(job.id, config: config, store: store, limit: count)
    let runs = task.recentRuns.map(HistoryRun.init)
    if json {
      try Output.jsonLine(HistoryDocument(id: task.id.rawValue, runs: runs))
      return
    }
    Output.line("\(task.id): \(runs.count) run(s), newest first")
    for run in runs { Output.line(run.text) }
  }
}

extension HistoryCommand {
  /// The job's stored status with up to `limit` recent runs, read read-only from `store` or the
  /// config's store; an operator error naming what is wrong otherwise.
  static func storedTask(
    _ id: String, config: ConfigOption, store: String?, limit: Int
  ) throws -> TaskStatus {
    let taskId: TaskId
    do {
      taskId = try TaskId(id)
    } catch {
      throw OperatorError("invalid job id \"\(id)\": \(error)")
    }
    let storePath =
      try store ?? config.loadIfPresent(decodingJobs: false)?.storePath
      ?? DefaultLocations.current().storePath
    let task: TaskStatus?
    do {
      task = try TaskStoreReader(path: storePath).task(taskId, historyLimit: limit)
    } catch {
      throw OperatorError("\(error)")
    }
    guard let task else { throw OperatorError("no such job in \(storePath): \(id)") }
    return task
  }
}

/// What `history --json` prints.
struct HistoryDocument: Encodable {
  var id: String
  var runs: [HistoryRun]
}

/// One stored run as `history` shows it.
struct HistoryRun: Encodable {
  var attempt: Int
  var startedAt: Date?
  var endedAt: Date
  var outcome: String
  var reason: String?
  /// The conditions the run started under, in words.
  var conditions: String?
  /// The last lines of its output.
  var outputTail: String?
  /// How a stopped run ended: `stopped with SIGINT`, `killed with SIGKILL after 30 s`.
  var stop: String?
  /// The bytes counted for the run; nil when none were.
  var network: RunNetworkBytes?

  init(_ record: RunRecord) {
    attempt = record.attempt
    startedAt = record.startedAt
    endedAt = record.endedAt
    outcome = record.outcome
    reason = record.reason
    conditions = record.conditions
    outputTail = record.outputTail
    stop = record.stop
    network = record.network
  }

  /// Seconds from start to end; nil when the worker never started.
  var durationSeconds: Double? { startedAt.map { endedAt.timeIntervalSince($0) } }

  private enum CodingKeys: String, CodingKey {
    case attempt, startedAt, endedAt, durationSeconds, outcome, reason, conditions, outputTail
    case stop, bytes, meteredBytes, accounting
  }

  /// `{"sent": N, "received": N}` in JSON.
  private struct Directions: Encodable {
    var sent: Int64
    var received: Int64
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(attempt, forKey: .attempt)
    try container.encode(startedAt.map(ISO8601.string), forKey: .startedAt)
    try container.encode(ISO8601.string(endedAt), forKey: .endedAt)
    try container.encode(durationSeconds, forKey: .durationSeconds)
    try container.encode(outcome, forKey: .outcome)
    try container.encode(reason, forKey: .reason)
    try container.encode(conditions, forKey: .conditions)
    try container.encode(outputTail, forKey: .outputTail)
    try container.encode(stop, forKey: .stop)
    // A run without counted bytes has all three as null, like every other absent value.
    try container.encode(
      network.map { Directions(sent: $0.sent, received: $0.received) }, forKey: .bytes)
    try container.encode(
      network.map { Directions(sent: $0.meteredSent, received: $0.meteredReceived) },
      forKey: .meteredBytes)
    try container.encode(network?.accounting.rawValue, forKey: .accounting)
  }

  /// `Sat 2026-11-28 02:10:00 CET → 02:10:01 CET (1.2 s)  failure  attempt 0  exit status 1:
  /// disk full`, the reason's further lines indented below; a run whose worker never started
  /// says why it was held (`… blocked  not started: held at the gate: … — no attempt used`).
  var text: String {
    let reasonLines =
      reason.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
      ?? []
    var lines: [String]
    if let startedAt {
      let start = HumanText.time(startedAt)
      var end = HumanText.time(endedAt)
      // The same day: the end's clock time is enough.
      let (startWords, endWords) = (start.split(separator: " "), end.split(separator: " "))
      if startWords.count > 2, endWords.count > 2, startWords[..<2] == endWords[..<2] {
        end = endWords[2...].joined(separator: " ")
      }
      let duration = HumanText.duration(seconds: endedAt.timeIntervalSince(startedAt))
      lines = ["\(start) → \(end) (\(duration))  \(outcome)  attempt \(attempt)"]
      if let first = reasonLines.first, !first.isEmpty { lines[0] += "  \(first)" }
    } else {
      lines = [
        "\(HumanText.time(endedAt))  \(outcome)  \(Self.notStarted(outcome, reasonLines.first))"
      ]
    }
    lines += reasonLines.dropFirst().map { "    \($0)" }
    if let conditions { lines.append("    started under: \(conditions)") }
    if let stop { lines.append("    \(stop)") }
    if let network { lines.append("    network: \(Self.networkText(network))") }
    if let outputTail, !outputTail.isEmpty {
      lines.append("    output:")
      lines += outputTail.split(separator: "\n", omittingEmptySubsequences: false).map {
        "      \($0)"
      }
    }
    return lines.joined(separator: "\n")
  }

  /// `612 KB sent, 3.1 KB received, 615 KB of it on metered links (approximate: the primary
  /// link's counters; other traffic on the link counts too)`.
  static func networkText(_ bytes: RunNetworkBytes) -> String {
    let how =
      switch bytes.accounting {
      case .link: "approximate: the primary link's counters; other traffic on the link counts too"
      case .cgroup: "the run's own packets, counted by the kernel"
      }
    return "\(MeteredBudget.byteText(bytes.sent)) sent, "
      + "\(MeteredBudget.byteText(bytes.received)) received, "
      + "\(MeteredBudget.byteText(bytes.meteredBytes)) of it on metered links (\(how))"
  }

  /// Why a run never started, in words: a blocked or deferred run was held at the gate (its
  /// constraints unmet when it was due) and used no attempt.
  static func notStarted(_ outcome: String, _ reason: String?) -> String {
    let why = reason.flatMap { $0.isEmpty ? nil : $0 }
    switch outcome {
    case "blocked", "deferred":
      let held = why.map { $0.hasPrefix("network gate: ") ? String($0.dropFirst(14)) : $0 }
      return "not started: held at the gate" + (held.map { ": \($0)" } ?? "")
        + " — no attempt used"
    default:
      return "not started" + (why.map { ": \($0)" } ?? "")
    }
  }
}
