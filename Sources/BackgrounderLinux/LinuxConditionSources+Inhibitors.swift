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
  /// asked for on a thread of their own (the worker does not wait for logind) when the worker
  /// starts, or with `from: .confirmedStart` when it confirms its start, released while the run
  /// is paused (``ConditionLossPolicy/pause(max:)``) and taken again when it resumes, and
  /// released when the worker returns. No logind (no system bus, a container), or a refusal,
  /// is logged once and the work runs without a lock.
  public func holdingInhibitors(
    from start: InhibitorStart = .workerStart,
    _ factory: @escaping Backgrounder.WorkerFactory
  ) -> Backgrounder.WorkerFactory {
    { [inhibitor] taskId in
      try factory(taskId).map { InhibitingWorker(worker: $0, inhibitor: inhibitor, from: start) }
    }
  }
}

/// When a run of ``LinuxConditionSources/holdingInhibitors(from:_:)`` asks logind for its locks.
public enum InhibitorStart: Sendable {
  /// When the worker starts (the default): the whole run holds them.
  case workerStart
  /// When the worker's `WorkContext.confirmStart()` first returns `true`: for a worker that
  /// confirms right before it starts something that cannot be undone (the daemon's command
  /// runs, before the spawn). A run that gives its start back (`confirmStart()` said no, or
  /// `declineStart(reason:)`) asks logind for nothing; a worker that never confirms holds no
  /// lock.
  case confirmedStart
}

/// A worker that holds its inhibitor's locks while the worker it wraps runs.
private struct InhibitingWorker: Worker {
  let worker: any Worker
  let inhibitor: SleepInhibitor
  let from: InhibitorStart

  /// The run's locks; whether the work has started, is paused, and whether the worker has
  /// returned: the locks are wanted while it has started, is not paused and has not returned.
  private struct Holding {
    var held: InhibitorLock?
    var started: Bool
    var paused = false
    var done = false
  }

  func execute(_ context: WorkContext) async -> WorkResult {
    let (inhibitor, jobID, mode) = (inhibitor, context.taskId.rawValue, context.inhibitPolicy)
    let lock = Lock(Holding(started: from == .workerStart))
    // Asks for the locks when they are wanted and not held.
    let take: @Sendable () -> Void = {
      lock.withLock { state in
        if state.started, !state.paused, !state.done, state.held == nil {
          state.held = inhibitor.hold(jobID: jobID, mode: mode)
        }
      }
    }
    if from == .confirmedStart {
      context.observeConfirmedStart {
        lock.withLock { $0.started = true }
        take()
      }
    } else {
      take()
    }
    // Released while the run is paused, taken again on the thaw, unless the run is thawed to
    // be stopped.
    context.observePauses { change in
      switch change {
      case .pause:
        lock.withLock { state in
          state.paused = true
          state.held?.release()
          state.held = nil
        }
      case .resume:
        lock.withLock { $0.paused = false }
        guard context.stopReason == nil else { return }
        take()
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
