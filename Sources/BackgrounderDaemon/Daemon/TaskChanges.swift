import Backgrounder
import Foundation
import PowerSource
import Reachability

/// The runtime's events as the task changes `status --watch` prints.
enum TaskChanges {
  /// A new subscription to `runtime`'s events, mapped to task changes; with `monitor`, first
  /// a ``TaskChange/Kind/network`` change carrying its hints and `view()`, then one each time
  /// either changes: at each network status `monitor` publishes and each power status `probe`
  /// publishes (pushed, not polled). Ends when the runtime's events end.
  static func stream(
    of runtime: Backgrounder, network monitor: ReachabilityMonitor? = nil,
    power probe: PowerProbe? = nil, view: (@Sendable () -> DaemonView?)? = nil
  ) -> AsyncStream<TaskChange> {
    let events = runtime.events()
    let statuses = monitor?.statusUpdates()
    let powers = probe?.statusUpdates()
    return AsyncStream { continuation in
      let task = Task {
        var network: Task<Void, Never>?
        if let monitor, let statuses {
          network = Task {
            // Network and power statuses, merged: each may change the view.
            let (ticks, tick) = AsyncStream<Void>.makeStream()
            let readers = [
              Task {
                for await _ in statuses { tick.yield() }
                tick.finish()
              },
              Task {
                guard let powers else { return }
                for await _ in powers { tick.yield() }
              },
            ]
            defer { for reader in readers { reader.cancel() } }
            var sent = (hints: monitor.hints, view: view?())
            continuation.yield(networkChange(sent.hints, view: sent.view))
            for await _ in ticks {
              let now = (hints: monitor.hints, view: view?())
              guard now.hints != sent.hints || now.view != sent.view else { continue }
              sent = now
              continuation.yield(networkChange(now.hints, view: now.view))
            }
          }
        }
        for await event in events {
          if let change = change(for: event) { continuation.yield(change) }
        }
        // The runtime's events end at shutdown; the network part ends with them.
        network?.cancel()
        continuation.finish()
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  static func networkChange(_ hints: LinkHints, view: DaemonView? = nil) -> TaskChange {
    TaskChange(
      time: ISO8601DateFormatter().string(from: Date()), task: nil, change: .network,
      detail: nil, hints: hints, view: view)
  }

  /// The change an event stands for; nil for events `status --watch` does not show (progress).
  static func change(for event: MonitorEvent) -> TaskChange? {
    let (kind, detail): (TaskChange.Kind, String?)
    switch event.kind {
    case .scheduled: (kind, detail) = (.scheduled, nil)
    case .scheduleReplaced: (kind, detail) = (.scheduled, "replaced the previous definition")
    case .retryScheduled(let attempt, let delay):
      (kind, detail) = (.scheduled, "retry: attempt \(attempt) in \(HumanText.duration(delay))")
    case .cancelled(let source): (kind, detail) = (.cancelled, source.rawValue)
    case .workStarted(let attempt): (kind, detail) = (.started, "attempt \(attempt)")
    case .workCompleted(let attempt, let result, let runtime):
      (kind, detail) = (
        .finished,
        "attempt \(attempt) after \(HumanText.duration(runtime)): \(HumanText.result(result))"
      )
    case .attemptFailed(let reason): (kind, detail) = (.finished, "failed: \(reason.rawValue)")
    case .workStopped(let attempt, let reason):
      (kind, detail) = (.finished, "attempt \(attempt) stopped: \(reason.rawValue)")
    case .workerAbandoned(let attempt): (kind, detail) = (.finished, "attempt \(attempt) abandoned")
    case .workPaused(let attempt, let reason):
      (kind, detail) = (.paused, "attempt \(attempt): \(reason.lostCondition)")
    case .workResumed(let attempt, let paused):
      (kind, detail) = (.resumed, "attempt \(attempt) after \(HumanText.duration(paused))")
    case .attemptDeferred(let reason): (kind, detail) = (.deferred, reason.rawValue)
    case .skipped(let reason): (kind, detail) = (.deferred, "skipped: \(reason.rawValue)")
    case .libraryError(let message): (kind, detail) = (.error, message)
    case .progress: return nil
    }
    return TaskChange(
      time: ISO8601DateFormatter().string(from: event.time), task: event.taskId?.rawValue,
      change: kind, detail: detail)
  }
}
