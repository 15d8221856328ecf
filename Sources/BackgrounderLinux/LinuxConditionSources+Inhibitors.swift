import Backgrounder
import Locking
import Logind

extension LinuxConditionSources {
  /// `factory`, with each worker it makes holding systemd-logind's `sleep` and `shutdown`
  /// inhibitor locks while it runs, in its request's ``InhibitPolicy`` (`delay` by default:
  /// sleep and shutdown wait for the run up to logind's `InhibitDelayMaxSec`; `block`: until it
  /// ends; `none`: no lock), as the daemon's command runs do:
  ///
  /// ```swift
  /// try runtime.registerFallback(sources.holdingInhibitors { _ in PhotoUpload() })
  /// ```
  ///
  /// The locks name the run (`why` "running <task id>") and ``Options/inhibitorWho``. They are
  /// asked for on a thread of their own when the worker starts (the worker does not wait for
  /// logind), released while the run is paused (``ConditionLossPolicy/pause(max:)``) and taken
  /// again when it resumes, and released when the worker returns. No logind (no system bus, a
  /// container), or a refusal, is logged once and the work runs without a lock.
  public func holdingInhibitors(_ factory: @escaping Backgrounder.WorkerFactory)
    -> Backgrounder.WorkerFactory
  {
    { [inhibitor] taskId in
      try factory(taskId).map { InhibitingWorker(worker: $0, inhibitor: inhibitor) }
    }
  }
}

/// A worker that holds its inhibitor's locks while the worker it wraps runs.
private struct InhibitingWorker: Worker {
  let worker: any Worker
  let inhibitor: SleepInhibitor

  func execute(_ context: WorkContext) async -> WorkResult {
    let (inhibitor, jobID, mode) = (inhibitor, context.taskId.rawValue, context.inhibitPolicy)
    let lock = Lock<(held: InhibitorLock?, done: Bool)>(
      (inhibitor.hold(jobID: jobID, mode: mode), false))
    // Released while the run is paused, taken again on the thaw, unless the run is thawed to
    // be stopped (or its worker has returned).
    context.observePauses { change in
      switch change {
      case .pause:
        lock.withLock { state in
          state.held?.release()
          state.held = nil
        }
      case .resume:
        guard context.stopReason == nil else { return }
        lock.withLock { state in
          if state.held == nil, !state.done {
            state.held = inhibitor.hold(jobID: jobID, mode: mode)
          }
        }
      }
    }
    defer {
      lock.withLock { state in
        state.held?.release()
        state.held = nil
        state.done = true
      }
    }
    return await worker.execute(context)
  }
}
