import Locking

/// The live side of one run: what the driver's controller waits on, and what stops, gate
/// releases and expiry act on. Every decision goes through a ``Latch`` so the first signal
/// wins whatever races.
final class RunHandle: Sendable {
  enum GateResult: Sendable, Equatable {
    case passed
    case timedOut
    case stopped(StopReason)
  }

  let gate = Latch<GateResult>()
  let end = Latch<RunEnding>()
  /// `true` when the worker returned, `false` when it was abandoned after the grace period.
  let exit = Latch<Bool>()
  private let state = Lock<(worker: Task<Void, Never>?, stopReason: StopReason?)>((nil, nil))
  private let recorded = Lock(RunDetail())
  /// The worker's pause handler (``WorkContext/handlePauses(_:)``), the observers
  /// (``WorkContext/observePauses(_:)``), and whether it froze.
  private let pausing = Lock(Pausing())

  private struct Pausing {
    var handler: (@Sendable (PauseChange) -> Void)?
    var observers: [@Sendable (PauseChange) -> Void] = []
    var paused = false

    /// Tells the handler and the observers: the observers after the handler froze the work,
    /// before it thaws it.
    func deliver(_ change: PauseChange) {
      if case .resume = change { for observer in observers { observer(change) } }
      handler?(change)
      if case .pause = change { for observer in observers { observer(change) } }
    }
  }
  /// Called once, when the worker's ``WorkContext/confirmStart()`` first returns `true`
  /// (``WorkContext/observeConfirmedStart(_:)``).
  private let startObservers = Lock<[@Sendable () -> Void]>([])
  /// Fired on every pause and thaw: the budget timer waits on it while the run is paused.
  let pauseChanged = WakeSignal()

  /// What the run record keeps besides the outcome: start conditions and output tail.
  var detail: RunDetail { recorded.withLock { $0 } }

  /// The conditions the worker was started under, in words.
  func recordConditions(_ text: String) { recorded.withLock { $0.conditions = text } }

  /// The worker's output tail, bounded.
  func recordOutputTail(_ text: String) {
    let bounded = RunDetail.bounded(text)
    recorded.withLock { $0.outputTail = bounded }
  }

  /// How the worker ended after it was stopped, in words.
  func recordStop(_ text: String) { recorded.withLock { $0.stop = text } }

  func recordNetworkBytes(_ record: RunNetworkRecord) {
    recorded.withLock { $0.networkBytes = record }
  }

  var stopReason: StopReason? { state.withLock { $0.stopReason } }

  /// Stops the run: thaws it when paused (a frozen process handles no stop signal), resolves
  /// the gate and the end with `reason` and cancels the worker.
  func stop(_ reason: StopReason) {
    let worker = state.withLock { state -> Task<Void, Never>? in
      if state.stopReason == nil { state.stopReason = reason }
      return state.worker
    }
    thaw()
    gate.resolve(.stopped(reason))
    if end.resolve(.stopped(reason)) { worker?.cancel() }
  }

  /// Expires the run — its budget ran out, or `onRequest` (`Backgrounder.expire`): resolves the
  /// end and cancels the worker.
  func expire(onRequest: Bool = false) {
    thaw()
    let worker = state.withLock { $0.worker }
    if end.resolve(onRequest ? .expiredOnRequest : .expired) { worker?.cancel() }
  }

  /// The worker found the conditions changed before its start: the run ends unstarted.
  func conditionsChanged() {
    end.resolve(.conditionsChanged)
  }

  /// The worker declined to start for a condition of its own: the run ends unstarted.
  func declined(_ reason: String) {
    end.resolve(.declined(reason))
  }

  /// Takes the worker's pause handler.
  func acceptPauses(_ handler: @escaping @Sendable (PauseChange) -> Void) {
    pausing.withLock { $0.handler = handler }
  }

  /// Lets go of the pause handler and the pause and start observers once the worker has
  /// returned (or was abandoned): they capture the worker's ``WorkContext``, which holds this
  /// handle, so kept they would keep the run's handle, and everything it holds, alive for good.
  func dropWorkerClosures() {
    pausing.withLock { state in
      state.handler = nil
      state.observers = []
    }
    startObservers.withLock { $0 = [] }
  }

  /// Adds an observer of the worker's confirmed start.
  func observeConfirmedStart(_ observer: @escaping @Sendable () -> Void) {
    startObservers.withLock { $0.append(observer) }
  }

  /// The worker confirmed its start: tells the start observers, once.
  func confirmedStart() {
    let observers = startObservers.withLock { observers in
      defer { observers = [] }
      return observers
    }
    for observer in observers { observer() }
  }

  /// Adds an observer of the pauses the handler is told of.
  func observePauses(_ observer: @escaping @Sendable (PauseChange) -> Void) {
    pausing.withLock { $0.observers.append(observer) }
  }

  /// Brings the worker to the pause state `desired()` says (the lost condition, or nil: run),
  /// read under this handle's lock so that concurrent changes apply in order. A worker with no
  /// pause handler, or a run that ended, cannot be frozen: it is stopped instead.
  func syncPause(_ desired: () -> StopReason?) {
    let cannotPause = pausing.withLock { state -> StopReason? in
      let wanted = desired()
      if let wanted, !state.paused {
        guard state.handler != nil, end.value == nil else { return wanted }
        state.deliver(.pause(wanted))
        state.paused = true
      } else if wanted == nil, state.paused {
        state.deliver(.resume)
        state.paused = false
      }
      return nil
    }
    pauseChanged.fire()
    if let cannotPause { stop(cannotPause) }
  }

  /// Thaws a frozen worker (before it is stopped).
  private func thaw() {
    pausing.withLock { state in
      guard state.paused else { return }
      state.deliver(.resume)
      state.paused = false
    }
    pauseChanged.fire()
  }

  /// Records the worker's task, cancelling it at once if the run already ended.
  func attach(_ worker: Task<Void, Never>) {
    state.withLock { $0.worker = worker }
    if end.value != nil { worker.cancel() }
  }
}
