import Locking

/// What the runtime noticed going wrong, kept for ``Backgrounder/diagnostics()``: condition
/// sources that ended or never reported, abandoned workers, clock jumps and start failures.
/// Recording takes a short lock and never waits for I/O.
final class HealthRecorder: Sendable {
  /// Problems of one kind kept at most (the oldest are dropped).
  static let keptPerKind = 20

  private struct Source {
    var subscribedAt: WallInstant
    var reported = false
    var endedAt: WallInstant?
  }

  private struct State {
    var sources: [ConditionSourceName: Source] = [:]
    var events: [HealthProblem] = []
    var startFailure: HealthProblem?
  }

  private let state = Lock(State())

  /// The runtime subscribed to `source`'s updates.
  func subscribed(_ source: ConditionSourceName, at now: WallInstant) {
    state.withLock { $0.sources[source] = Source(subscribedAt: now) }
  }

  /// `source` delivered conditions.
  func reported(_ source: ConditionSourceName) {
    state.withLock { state in
      if state.sources[source]?.reported == false { state.sources[source]?.reported = true }
    }
  }

  /// `source`'s updates ended although nobody cancelled the subscription.
  func ended(_ source: ConditionSourceName, at now: WallInstant) {
    state.withLock { $0.sources[source]?.endedAt = now }
  }

  /// A worker of `taskId` ignored cancellation for `grace` and was abandoned.
  func workerAbandoned(_ taskId: TaskId, at now: WallInstant, grace: Duration) {
    append(
      HealthProblem(
        kind: .workerAbandoned, taskId: taskId, detectedAt: now.date,
        message: "the worker ignored cancellation for \(grace) and was abandoned; it may still "
          + "be running"))
  }

  /// The wall clock was set; `offset` is how far it moved, when known.
  func clockJumped(at now: WallInstant, offset: Duration?) {
    let amount = offset.map { " by \($0)" } ?? ""
    append(
      HealthProblem(
        kind: .clockJump, detectedAt: now.date,
        message: "the wall clock was set\(amount); due times were computed on the old clock"))
  }

  /// `start()` failed with a store error.
  func startFailed(_ error: StoreError, at now: WallInstant) {
    state.withLock { state in
      state.startFailure = HealthProblem(
        kind: .storeError, detectedAt: now.date, message: "start failed: \(error)")
    }
  }

  /// The problems recorded so far, plus the condition sources that are silent at `now`.
  func problems(now: WallInstant) -> [HealthProblem] {
    state.withLock { state in
      var problems: [HealthProblem] = state.startFailure.map { [$0] } ?? []
      for (name, source) in state.sources.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        if let ended = source.endedAt {
          problems.append(
            HealthProblem(
              kind: .conditionSourceFailed, detectedAt: ended.date,
              message: "the \(name.rawValue) source stopped delivering updates; the runtime "
                + "keeps its last conditions"))
        } else if !source.reported,
          source.subscribedAt.duration(to: now) >= HealthProblem.silentSourceLimit
        {
          problems.append(
            HealthProblem(
              kind: .conditionSourceSilent, detectedAt: now.date,
              message: "the \(name.rawValue) source has not reported any conditions since "
                + "\(ISO8601.string(source.subscribedAt.date))"))
        }
      }
      return problems + state.events
    }
  }

  private func append(_ problem: HealthProblem) {
    state.withLock { state in
      state.events.append(problem)
      let sameKind = state.events.indices.filter { state.events[$0].kind == problem.kind }
      if sameKind.count > Self.keptPerKind { state.events.remove(at: sameKind[0]) }
    }
  }
}
