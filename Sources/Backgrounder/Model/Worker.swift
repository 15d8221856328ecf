import Foundation

/// The code that runs for a task.
///
/// `execute` should honour cooperative cancellation: the task is cancelled when the budget
/// expires or a constraint is lost (``WorkContext/stopReason`` says why).
public protocol Worker: Sendable {
  /// Does the work and reports how it went.
  func execute(_ context: WorkContext) async -> WorkResult
}

/// A worker made from a closure.
public struct ClosureWorker: Worker {
  private let body: @Sendable (WorkContext) async -> WorkResult

  /// Wraps `body`.
  public init(_ body: @escaping @Sendable (WorkContext) async -> WorkResult) {
    self.body = body
  }

  /// Runs the closure.
  public func execute(_ context: WorkContext) async -> WorkResult {
    await body(context)
  }
}

/// What a worker knows about its run.
public struct WorkContext: Sendable {
  /// The task being run.
  public let taskId: TaskId
  /// The attempt within the current cycle, counting from 0.
  public let attempt: Int
  /// The request's input.
  public let input: WorkInput
  /// The run's time budget.
  public let budget: Duration
  /// The request's ``InhibitPolicy``: what the code running the work should hold against
  /// system sleep and shutdown while it goes.
  public let inhibitPolicy: InhibitPolicy
  /// When the run started (wall clock of the runtime's clock).
  public let startedAt: Date
  /// Receives progress reports.
  public let progress: ProgressReporter
  /// The network conditions this run was allowed to start under: the same snapshot the
  /// decision used, to tell the work (metered, connectivity, primary link).
  public let network: NetworkConditions
  /// The task's constraints had relaxed when this run was claimed (``ConstraintRelaxation``):
  /// it runs under the relaxed ones after waiting for the full ones (`BACKGROUNDER_RELAXED=1`).
  public internal(set) var relaxed = false
  /// The task's bandwidth cap (``WorkConstraints/bandwidth``), nil: none.
  public internal(set) var bandwidthCap: BandwidthCap?
  /// The egress cap this run keeps to, in bits per second: ``bandwidthCap`` for the network it
  /// started on (``network``; its metered rate on a metered primary link); nil: not capped.
  /// The daemon shapes its command runs to it in the kernel; work in the process paces itself,
  /// or declines the start when the cap is required and it cannot keep to it.
  public var bandwidth: UInt64? { bandwidthCap?.rate(metered: network.isDataMetered) }
  let handle: RunHandle
  let stillPermitted: @Sendable () -> Bool

  /// Call right before a start that cannot be undone (spawning a process, sending a
  /// request): `true` when the conditions are still ``network``, so the work may start under
  /// them. `false` when they changed since the decision: do not start, return at once; the
  /// run is given back without using an attempt and waits for its conditions again.
  public func confirmStart() -> Bool {
    if stillPermitted() {
      handle.confirmedStart()
      return true
    }
    handle.conditionsChanged()
    return false
  }

  /// Call instead of starting when a condition of the work's own is not met (the daemon: a
  /// `bandwidth-required` cap that cannot be enforced now), then return at once: the run is
  /// given back without using an attempt (recorded as `deferred` with `reason`) and tried again
  /// after the task's backoff, counted as a deferral as the network gate's timeout is. What the
  /// worker returns afterwards is ignored.
  public func declineStart(reason: String) {
    handle.declined(reason)
  }

  /// Keeps `text` (the last lines the work printed, at most 4 KiB: the end is kept) with this
  /// run's record in the store, for `history`. The last call counts.
  public func recordOutputTail(_ text: String) { handle.recordOutputTail(text) }

  /// Keeps how the work ended after it was stopped (`stopped with SIGINT`, `killed with
  /// SIGKILL after 30 s`) with this run's record, for `history`. The last call counts.
  public func recordStop(_ text: String) { handle.recordStop(text) }

  /// Keeps the bytes this run sent and received (``Backgrounder/networkBytes(after:)`` reads
  /// them back; `history` shows them with the run) in the transaction that records the run's
  /// outcome: no write of their own. The last call counts.
  public func recordNetworkBytes(_ record: RunNetworkRecord) {
    handle.recordNetworkBytes(record)
  }

  /// Makes this run pausable (``ConditionLossPolicy/pause(max:)``): `handler` gets
  /// ``PauseChange/pause(_:)`` when a condition the run needs is lost — freeze the work there
  /// (the daemon freezes the run's cgroup or sends SIGSTOP to its processes) — and
  /// ``PauseChange/resume`` when the conditions hold again, or right before a paused run is
  /// stopped (its pause-max reached, its budget expired, a cancel, a shutdown). It is called
  /// synchronously and must return at once. The budget clock stands still while the run is
  /// paused. A run of a task that pauses is stopped instead when its worker never called this.
  public func handlePauses(_ handler: @escaping @Sendable (PauseChange) -> Void) {
    handle.acceptPauses(handler)
  }

  /// Calls `observer` on each pause and thaw that ``handlePauses(_:)``'s handler is told of
  /// (after the handler on a pause, before it on a resume), without making the run pausable:
  /// for code that wraps a worker and holds something while the work runs (BackgrounderLinux's
  /// inhibitor locks, released while the run is paused). Called synchronously; must return at
  /// once.
  package func observePauses(_ observer: @escaping @Sendable (PauseChange) -> Void) {
    handle.observePauses(observer)
  }

  /// Calls `observer` once, when ``confirmStart()`` first returns `true`: for code that wraps
  /// a worker which confirms every start, and holds something only once the work really
  /// starts (BackgrounderLinux's inhibitor locks under `InhibitorStart.confirmedStart`). Called
  /// synchronously on the worker's task; must return at once.
  package func observeConfirmedStart(_ observer: @escaping @Sendable () -> Void) {
    handle.observeConfirmedStart(observer)
  }

  /// Why the run is being stopped, once it is (budget expiry is reported as `nil`;
  /// check `Task.isCancelled` for every kind of stop).
  public var stopReason: StopReason? { handle.stopReason }

  /// When the budget runs out, if the run is never paused (a pause moves it by its length).
  public var deadline: Date { startedAt.addingTimeInterval(budget.seconds) }
}

/// Lets a worker report progress; each report becomes a `progress` event and is shown by
/// `scheduled()`.
public final class ProgressReporter: Sendable {
  private let sink: @Sendable (Double, String?) -> Void

  init(sink: @escaping @Sendable (Double, String?) -> Void) {
    self.sink = sink
  }

  /// Reports `fraction` (clamped to 0…1) done, with an optional message.
  public func report(_ fraction: Double, message: String? = nil) {
    sink(min(max(fraction, 0), 1), message)
  }
}
