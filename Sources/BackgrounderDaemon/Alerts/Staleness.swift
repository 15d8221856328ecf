import Backgrounder
import Foundation

/// The decision behind `alert-after`, a pure function of the job's creation, its last success,
/// the limit and the time: a job is stale once it has gone `alertAfter` without a success,
/// counted from the later of its creation and its last success.
package struct Staleness: Sendable, Equatable {
  /// What the time without success is counted from.
  package var since: Date
  /// When the job is (or becomes) stale.
  package var deadline: Date

  /// The staleness of a job created at `created` whose last success ended at `lastSuccess`.
  package init(created: Date, lastSuccess: Date?, alertAfter: Duration) {
    since = max(created, lastSuccess ?? created)
    let (seconds, attoseconds) = alertAfter.components
    deadline = since.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
  }

  /// Whether the job is stale at `now`.
  package func isStale(at now: Date) -> Bool { now >= deadline }
}

extension HealthProblem.Kind {
  /// A job with `alert-after` has gone that long without a success.
  package static let jobStale = HealthProblem.Kind(rawValue: "jobStale")
}

/// The words of a staleness problem: "no success for 3 d 4 h: waiting for an unmetered network
/// since Mon 09:12".
enum StalenessMessage {
  /// What `status` says of the job's task: what it waits for or fails with.
  struct Activity: Sendable, Equatable {
    var waitingFor: [PendingPredicate] = []
    var lastResult: LastResult?
    var lastReason: String?
    var lastRunEndedAt: Date?
  }

  static func text(
    since: Date, now: Date, activity: Activity?, timeZone: TimeZone = .current
  ) -> String {
    let head = "no success for \(elapsed(from: since, to: now))"
    guard let activity else { return head }
    let conditions = activity.waitingFor.compactMap(phrase)
    if !conditions.isEmpty {
      let from = activity.lastRunEndedAt.map { max($0, since) } ?? since
      return "\(head): waiting for \(conditions.joined(separator: " and ")) since "
        + shortTime(from, timeZone)
    }
    if let reason = activity.lastReason, activity.lastResult != .success {
      let firstLine = reason.split(separator: "\n", omittingEmptySubsequences: true).first ?? ""
      let when = activity.lastRunEndedAt.map { " (last run \(shortTime($0, timeZone)))" } ?? ""
      return "\(head): failing with \(firstLine)\(when)"
    }
    if activity.lastRunEndedAt == nil { return "\(head): it has not run yet" }
    return head
  }

  /// `3 d 4 h`, `5 h 12 min`, `12 min`, `40 s`.
  static func elapsed(from start: Date, to end: Date) -> String {
    let seconds = max(0, Int(end.timeIntervalSince(start)))
    let (days, hours, minutes) = (seconds / 86_400, seconds % 86_400 / 3600, seconds % 3600 / 60)
    if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
    if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
    if minutes > 0 { return "\(minutes) min" }
    return "\(seconds) s"
  }

  private static func phrase(_ predicate: PendingPredicate) -> String? {
    switch predicate {
    case .networkRequired(.unmetered): "an unmetered network"
    case .networkRequired(.notRoaming), .notRoaming: "a network that is not roaming"
    case .networkRequired: "a network"
    case .workingInternet: "working internet"
    case .requiresCharging: "external power"
    case .requiresBatteryNotLow: "a battery that is not low"
    case .workerNotRegistered: "a worker"
    case .wifiNetwork(let allowed, _): "Wi-Fi network \(allowed.joined(separator: ", "))"
    case .networkInterface(let allowed, _): "interface \(allowed.joined(separator: ", "))"
    case .mounted(let path): "\(path) to be mounted"
    case .reachable(let destination, _): "\(destination) to be reachable"
    case .meteredBudget: "an unmetered network (metered budget spent)"
    case .userIdle(let required, _, _): "the user idle for \(HumanText.duration(required))"
    case .waitingForWindow: "its time window"
    case .waitingForBackoff, .waitingForEarliestBeginDate: nil
    }
  }

  /// `Mon 09:12` in `timeZone`.
  private static func shortTime(_ date: Date, _ timeZone: TimeZone) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.dateFormat = "EEE HH:mm"
    return formatter.string(from: date)
  }
}
