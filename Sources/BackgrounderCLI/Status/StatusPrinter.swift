import Backgrounder
import BackgrounderDaemon
import BackgrounderLinux
import Foundation
import PowerSource
import Reachability

/// Prints `status` output: the human report, JSON documents, or one line per change.
struct StatusPrinter {
  let json: Bool
  let watch: Bool
  let tasks: TaskSection
  /// Asked once when `status` starts.
  let health: HealthSection
  let daemon: DaemonSection
  /// Human report: table cells in full (`--wide`).
  var wide = false

  /// What a one-shot report shows besides network and power, as read at `now`.
  struct Sections: Sendable {
    var now: Date
    var tasks: [TaskStatus]?
    var health: HealthReport
    var daemon: DaemonSection.Report
  }

  /// Reads the tasks, health and daemon sections of the one-shot report (`status` reads them
  /// while the network is being probed).
  func readOneShotSections(now: Date) -> Sections {
    let (tasks, health, daemon) = readSections(now: now, daemonReport: self.health.daemonReport)
    return Sections(now: now, tasks: tasks, health: health, daemon: daemon)
  }

  /// The one-shot report or document, with `sections` when already read (else read now).
  func emit(network: NetworkStatus, power: PowerStatus, sections: Sections? = nil) throws {
    let sections = sections ?? readOneShotSections(now: Date())
    let now = sections.now
    let (taskList, daemonReport) = (sections.tasks, sections.daemon)
    var healthReport = sections.health
    // Without a daemon, our own reading of the hint sources: a timed-out source is a problem.
    if !healthReport.daemonAnswered {
      healthReport.problems += LinuxConditionSources.healthProblems(of: network)
    }
    if json {
      let document = StatusDocument(
        observedAt: nil, network: network, power: power, tasks: taskList,
        health: healthReport, daemon: daemonReport,
        daemonView: DaemonSection.viewElsewhere(daemonReport))
      Output.line(bytes: try document.jsonLine())
    } else {
      let configChanged = healthReport.problems.contains { $0.kind == .configRestartNeeded }
      // One truth: a daemon in another network namespace gates its jobs by its own view.
      var lines: [String]
      if let view = DaemonSection.viewElsewhere(daemonReport) {
        lines = DaemonSection.networkLines(view)
        lines.append("Power (the daemon's view): " + powerSummary(view.powerStatus))
      } else {
        lines = [NetworkStatusText.report(network, configChanged: configChanged)]
        lines += renderPower(power)
      }
      lines += DaemonSection.text(daemonReport, socketPath: daemon.socketPath)
      if let budget = daemonReport.meteredBudget {
        lines.append(budget.line { TaskStatusText.clockTime($0, now: now) })
      }
      lines +=
        taskList.map { TaskStatusText.report($0, storePath: tasks.storePath, now: now, wide: wide) }
        ?? ["Tasks: unavailable (see the error above)"]
      lines += healthReport.lines
      Output.line(lines.joined(separator: "\n"))
    }
  }

  /// One `--watch` line for a network or power change, newline included. In JSON it is the
  /// whole ``StatusDocument`` with `observedAt` (tasks, health and daemon as `sections` has
  /// them: current); in text a one-line network and power summary. With `daemonView` the
  /// network and power are the daemon's view, labelled as such (`"viewOf": "daemon"`);
  /// `ownLabel` labels this process's own view in text (JSON says `"viewOf": "client"`).
  func watchLine(
    network: NetworkStatus, power: PowerStatus, observedAt microseconds: Int64,
    encoder: inout StatusLineEncoder, sections: inout WatchSections,
    daemonView: DaemonView? = nil, ownLabel: String? = nil
  ) throws -> [UInt8] {
    guard json else {
      if let daemonView {
        return encoder.textLine(observedAt: microseconds, daemonView: daemonView)
      }
      return encoder.textLine(
        observedAt: microseconds, network: network, power: power, label: ownLabel)
    }
    let current = sections.sections()
    return try encoder.line(
      observedAt: microseconds, network: network, power: power, tasks: current.tasks,
      health: current.health, daemon: current.daemon, daemonView: daemonView,
      sectionsGeneration: sections.generation)
  }

  /// One `--watch` line for a task change: `{"observedAt": …, "taskChange": {…}}` in JSON.
  func emit(_ change: TaskChange, observedAt microseconds: Int64) throws {
    let observedAt = NetworkTimestamp.rfc3339(microseconds: microseconds)
    if json {
      try Output.jsonLine(TaskChangeLine(observedAt: observedAt, taskChange: change))
    } else {
      let detail = change.detail.map { " (\($0))" } ?? ""
      Output.line(
        "\(observedAt) task \(change.task ?? "-") \(change.change.rawValue)\(detail)")
    }
  }

  /// The tasks (`nil` when the store cannot be read), the health report and the daemon's
  /// (`daemonReport` when already known, else asked now).
  private func readSections(now: Date, daemonReport known: DaemonSection.Report? = nil)
    -> ([TaskStatus]?, HealthReport, DaemonSection.Report)
  {
    let read = sections(daemon: known ?? daemon.read(), storedTasks: tasks.read(now: now))
    return (read.tasks, read.health, read.daemon)
  }

  /// The sections for the daemon's `report` and the tasks as read from the store (`nil`: it
  /// cannot be read).
  func sections(daemon report: DaemonSection.Report, storedTasks: [TaskStatus]?)
    -> StatusSections
  {
    // With no daemon, a run left "running" ended with the process that ran it.
    let locks = Self.heldLocks(report.inhibitors)
    let taskList = storedTasks.map { list in
      list.map { task in
        var task = task
        task.interrupted = !report.running && report.error == nil && task.state == .running
        if task.state == .running { task.inhibitor = locks[task.id.rawValue] }
        return task
      }
    }
    let healthReport = health.report(tasksReadable: taskList != nil, storePath: tasks.storePath)
    return StatusSections(tasks: taskList, health: healthReport, daemon: report)
  }

  /// The mode of the lock each job's run holds now (asked for and not given: none), by job id.
  static func heldLocks(_ inhibitors: InhibitorsInfo?) -> [String: InhibitPolicy] {
    var locks: [String: InhibitPolicy] = [:]
    for lock in inhibitors?.locks ?? [] where lock.held {
      locks[lock.job] = InhibitPolicy(rawValue: lock.mode)
    }
    return locks
  }
}

/// The daemon, tasks and health sections of one `status` report or `--watch --json` line.
struct StatusSections: Equatable {
  /// The tasks; `nil` when the store cannot be read.
  var tasks: [TaskStatus]?
  var health: HealthReport
  var daemon: DaemonSection.Report
}

/// A `status --watch --json` line for a task change.
struct TaskChangeLine: Encodable {
  var observedAt: String
  var taskChange: TaskChange
}
