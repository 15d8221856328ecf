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

/// An error from ``TestDriver``.
///
/// Compare ``code`` to tell errors apart; new codes may be added in later versions.
public struct TestDriverError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case noSuchTask, notRunning
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// No active task (of the expected kind) has the id.
    public static let noSuchTask = Code(.noSuchTask)
    /// The task has no run in flight.
    public static let notRunning = Code(.notRunning)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What went wrong.
  public let code: Code
  /// The task concerned.
  public let taskId: TaskId

  private init(_ code: Code, _ taskId: TaskId) {
    self.code = code
    self.taskId = taskId
  }

  /// No active task (of the expected kind) has the id `taskId`.
  public static func noSuchTask(_ taskId: TaskId) -> TestDriverError {
    TestDriverError(.noSuchTask, taskId)
  }

  /// The task `taskId` has no run in flight.
  public static func notRunning(_ taskId: TaskId) -> TestDriverError {
    TestDriverError(.notRunning, taskId)
  }

  /// A readable explanation.
  public var description: String {
    switch code {
    case .noSuchTask: "no active task \(taskId) of that kind"
    case .notRunning: "task \(taskId) has no run in flight"
    default: "test driver error \(code) for \(taskId)"
    }
  }
}
