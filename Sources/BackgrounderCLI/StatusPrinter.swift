import Backgrounder
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

  func emit(network: NetworkStatus, power: PowerStatus, observedAt microseconds: Int64?) throws {
    let observedAt = watch ? microseconds.map(NetworkTimestamp.rfc3339(microseconds:)) : nil
    let now = Date()
    let taskList = tasks.read(now: now)
    let healthReport = health.report(tasksReadable: taskList != nil, storePath: tasks.storePath)
    if json {
      let document = StatusDocument(
        observedAt: observedAt, network: network, power: power, tasks: taskList,
        health: healthReport)
      Output.line(try Output.json(document))
    } else if let observedAt {
      Output.line(
        NetworkStatusText.line(network, observedAt: observedAt) + " | power: "
          + powerSummary(power))
    } else {
      var lines = [NetworkStatusText.report(network)]
      lines += renderPower(power)
      lines +=
        taskList.map { TaskStatusText.report($0, storePath: tasks.storePath, now: now) }
        ?? ["Tasks: unavailable (see the error above)"]
      lines += healthReport.lines
      Output.line(lines.joined(separator: "\n"))
    }
  }
}
