public import Backgrounder

/// Drives a started ``Backgrounder`` the way the system would, so workers can be tested in
/// milliseconds: declare constraints met, skip delays, stop running work.
public struct TestDriver: Sendable {
  /// The runtime under test.
  public let backgrounder: Backgrounder

  /// Creates a driver for `backgrounder` (which must be started before use).
  public init(_ backgrounder: Backgrounder) {
    self.backgrounder = backgrounder
  }

  /// Treats every constraint of `taskId` as met from now on: power blocks are released, the
  /// network gate passes at once, and constraint losses no longer stop its worker.
  public func setAllConstraintsMet(_ taskId: TaskId) throws(TestDriverError) {
    guard backgrounder.overrideConstraints(taskId) else { throw .noSuchTask(taskId) }
  }

  /// Makes a one-time task due now, as if its initial delay (or backoff) had elapsed.
  public func setInitialDelayMet(_ taskId: TaskId) throws(TestDriverError) {
    guard backgrounder.makeDue(taskId, kind: .oneTime) else { throw .noSuchTask(taskId) }
  }

  /// Makes a periodic task due now, as if its period had elapsed.
  public func setPeriodDelayMet(_ taskId: TaskId) throws(TestDriverError) {
    guard backgrounder.makeDue(taskId, kind: .periodic) else { throw .noSuchTask(taskId) }
  }

  /// Stops the running worker of `taskId` as the system would (e.g. a constraint was lost):
  /// its task is cancelled, ``WorkContext/stopReason`` reports `reason`, and the run is
  /// recorded as a retry that uses no attempt.
  public func stopRunningWork(
    _ taskId: TaskId, reason: StopReason = .requested
  ) throws(TestDriverError) {
    guard backgrounder.stopRunningWork(taskId, reason: reason) else { throw .notRunning(taskId) }
  }

  /// Waits until every change so far is committed to the store.
  public func flush() async {
    await backgrounder.flushStore()
  }
}

/// Errors from ``TestDriver``.
public enum TestDriverError: Error, Hashable, Sendable, CustomStringConvertible {
  /// No active task (of the expected kind) has this id.
  case noSuchTask(TaskId)
  /// The task has no run in flight.
  case notRunning(TaskId)

  /// A readable explanation.
  public var description: String {
    switch self {
    case .noSuchTask(let id): "no active task \(id) of that kind"
    case .notRunning(let id): "task \(id) has no run in flight"
    }
  }
}
