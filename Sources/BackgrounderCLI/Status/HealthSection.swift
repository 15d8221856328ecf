import Backgrounder
import BackgrounderDaemon
import Reachability

/// The `health` section of `status`: what the running daemon's runtime detected, plus what
/// `status` itself found (a store it cannot read). With no daemon, only the latter.
struct HealthSection: Sendable {
  /// The daemon's problems when one answered, nil when none runs.
  let daemonProblems: [HealthProblem]?
  /// Why the daemon could not be asked, if it could not.
  let queryFailure: String?
  /// The `daemon` section from the same answer: who answered, or that nobody did. Nil when the
  /// socket could not be asked, or the daemon did not say who it is (then `ping` asks).
  var daemonReport: DaemonSection.Report? = nil
  /// The running daemon's view of the network beyond the kernel (NetworkManager's answers, the
  /// probe's verdict, stale marks): `status` shows it rather than a second reading of its own.
  var daemonHints: LinkHints? = nil

  /// Asks the daemon behind `socketPath`, if one runs, on the calling thread: one request
  /// answers both the `health` and the `daemon` section of a one-shot `status`.
  static func read(socketPath: String) -> HealthSection {
    do {
      let response = try ControlClient(path: socketPath).sendBlocking(.health)
      return HealthSection(
        daemonProblems: response.problems ?? [], queryFailure: nil,
        daemonReport: response.daemon.map(DaemonSection.Report.init(answeredBy:)),
        daemonHints: response.hints)
    } catch .noDaemon {
      return HealthSection(
        daemonProblems: nil, queryFailure: nil, daemonReport: DaemonSection.Report(running: false))
    } catch {
      return HealthSection(daemonProblems: nil, queryFailure: "\(error)")
    }
  }

  /// The report, given whether the tasks could be read from `storePath`.
  func report(tasksReadable: Bool, storePath: String) -> HealthReport {
    var problems = daemonProblems ?? []
    if let queryFailure {
      problems.append(
        HealthProblem(
          kind: HealthProblem.Kind(rawValue: "daemonUnreachable"), detectedAt: nil,
          message: "cannot ask the daemon for its health: \(queryFailure)"))
    }
    if !tasksReadable {
      problems.append(
        HealthProblem(kind: .storeError, detectedAt: nil, message: "cannot read \(storePath)"))
    }
    return HealthReport(problems: problems, daemonAnswered: daemonProblems != nil)
  }
}

/// `{"healthy": Bool, "problems": [...]}` in `status --json`; one line plus one per problem in
/// the human report.
struct HealthReport: Encodable, Equatable {
  var problems: [HealthProblem]
  /// Whether a running daemon reported its runtime's health.
  var daemonAnswered: Bool

  var healthy: Bool { problems.isEmpty }

  private enum CodingKeys: String, CodingKey { case healthy, problems }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(healthy, forKey: .healthy)
    try container.encode(problems, forKey: .problems)
  }

  /// `Health: healthy` or `Health: 2 problem(s)` followed by the problems.
  var lines: [String] {
    let scope = daemonAnswered ? "" : " (no daemon running: store checks only)"
    if healthy { return ["Health: healthy" + scope] }
    return ["Health: \(problems.count) problem(s)" + scope] + problems.map { "  \($0)" }
  }
}
