import Backgrounder
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
  /// logind) and released when it returns, paused time included. No logind (no system bus, a
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
    let lock = inhibitor.hold(jobID: context.taskId.rawValue, mode: context.inhibitPolicy)
    defer { lock?.release() }
    return await worker.execute(context)
  }
}
