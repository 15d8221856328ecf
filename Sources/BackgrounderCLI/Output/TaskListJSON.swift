import Backgrounder
import Foundation

/// The `tasks` of `status --json`, written directly: the same bytes as `JSONEncoder` makes of
/// `[TaskStatus]` (see ``TaskStatus``'s `encode(to:)`), at a fraction of the cost.
enum TaskListJSON {
  /// Appends `[task,...]`, or `null` when the tasks could not be read.
  static func append(_ tasks: [TaskStatus]?, to json: inout JSONText) {
    guard let tasks else { return json.null() }
    json.array(tasks, append)
  }

  private static func append(_ task: TaskStatus, to json: inout JSONText) {
    json.ascii("{")
    json.key("attempt", first: true)
    json.int(task.attempt)
    json.key("deferrals")
    json.int(task.deferrals)
    json.key("ephemeral")
    json.bool(task.ephemeral)
    json.key("id")
    json.string(task.id.rawValue)
    if let inhibitor = task.inhibitor {
      json.key("inhibitor")
      json.string(inhibitor.rawValue)
    }
    json.key("kind")
    json.string(task.kind.rawValue)
    json.key("lastReason")
    json.string(task.lastReason)
    json.key("lastResult")
    json.string(task.lastResult?.rawValue)
    json.key("lastRunEndedAt")
    json.date(task.lastRunEndedAt)
    json.key("lastRunStartedAt")
    json.date(task.lastRunStartedAt)
    json.key("nextRun")
    json.date(task.nextRun)
    if task.isPaused {
      json.key("pauseReason")
      json.string(task.pauseReason?.rawValue)
      json.key("pausedSince")
      json.date(task.pausedSince)
    }
    json.key("pendingPredicates")
    json.array(task.pendingPredicates, append)
    json.key("recentRuns")
    json.array(task.recentRuns, append)
    if let relaxesAt = task.relaxesAt {
      json.key("relaxesAt")
      json.date(relaxesAt)
    }
    json.key("state")
    json.string(task.displayedState)
    json.ascii("}")
  }

  private static func append(_ predicate: PendingPredicate, to json: inout JSONText) {
    json.ascii("{")
    switch predicate {
    case .networkRequired(let requirement):
      json.key("kind", first: true)
      json.string("networkRequired")
      json.key("network")
      json.string(requirement.rawValue)
    case .workingInternet(let connectivity):
      json.key("connectivity", first: true)
      json.string(connectivity.rawValue)
      json.key("kind")
      json.string("workingInternet")
    case .requiresCharging:
      json.key("kind", first: true)
      json.string("requiresCharging")
    case .requiresBatteryNotLow:
      json.key("kind", first: true)
      json.string("requiresBatteryNotLow")
    case .waitingForBackoff(let until):
      json.key("kind", first: true)
      json.string("waitingForBackoff")
      json.key("until")
      json.date(until)
    case .waitingForEarliestBeginDate(let at):
      json.key("at", first: true)
      json.date(at)
      json.key("kind")
      json.string("waitingForEarliestBeginDate")
    case .workerNotRegistered:
      json.key("kind", first: true)
      json.string("workerNotRegistered")
    case .waitingForWindow(let opens):
      json.key("kind", first: true)
      json.string("waitingForWindow")
      json.key("opens")
      json.date(opens)
    case .wifiNetwork(let allowed, let current):
      if let current {
        json.key("current", first: true)
        json.string(current)
      }
      json.key("kind", first: current == nil)
      json.string("wifiNetwork")
      json.key("ssids")
      json.array(allowed) { $1.string($0) }
    case .networkInterface(let allowed, let current):
      if let current {
        json.key("current", first: true)
        json.string(current)
      }
      json.key("interfaces", first: current == nil)
      json.array(allowed) { $1.string($0) }
      json.key("kind")
      json.string("networkInterface")
    case .mounted(let path):
      json.key("kind", first: true)
      json.string("mounted")
      json.key("path")
      json.string(path)
    case .notRoaming(let unknown):
      json.key("kind", first: true)
      json.string("notRoaming")
      if let unknown {
        json.key("roamingUnknown")
        json.string(unknown)
      }
    case .reachable(let destination, let failure):
      json.key("destination", first: true)
      json.string(destination)
      if let failure {
        json.key("failure")
        json.string(failure.rawValue)
      }
      json.key("kind")
      json.string("reachable")
    case .meteredBudget(let wait):
      json.key("budget", first: true)
      json.int(Int(wait.budget.bytes))
      if let freesAt = wait.freesAt {
        json.key("freesAt")
        json.date(freesAt)
      }
      json.key("kind")
      json.string("meteredBudget")
      json.key("scope")
      json.string(wait.scope.rawValue)
      json.key("used")
      json.int(Int(wait.used))
      json.key("window")
      json.string(wait.budget.windowText)
    case .userIdle(let required, let idleSince, let unknown):
      if let idleSince {
        json.key("idleSince", first: true)
        json.date(idleSince)
      }
      json.key("kind", first: idleSince == nil)
      json.string("userIdle")
      json.key("requiredSeconds")
      json.int(Int(required.components.seconds))
      if let unknown {
        json.key("unknown")
        json.string(unknown)
      }
    }
    json.ascii("}")
  }

  private static func append(_ run: RunRecord, to json: inout JSONText) {
    json.ascii("{")
    json.key("attempt", first: true)
    json.int(run.attempt)
    json.key("endedAt")
    json.date(run.endedAt)
    json.key("outcome")
    json.string(run.outcome)
    json.key("reason")
    json.string(run.reason)
    json.key("startedAt")
    json.date(run.startedAt)
    json.ascii("}")
  }
}
