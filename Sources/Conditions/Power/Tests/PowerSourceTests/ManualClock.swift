import Locking

/// A clock that only moves when the test calls ``advance(by:)``; no real sleeping.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Int: Sleeper] = [:]
    var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = Lock(State())

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }

  /// Tasks currently sleeping on this clock.
  var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let (immediate, waiters): (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) =
          state.withLock { state in
            if Task.isCancelled { return (.failure(CancellationError()), []) }
            if deadline <= state.now { return (.success(()), []) }
            state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
            return (nil, Self.satisfiedWaiters(&state))
          }
        if let immediate { continuation.resume(with: immediate) }
        for waiter in waiters { waiter.resume() }
      }
    } onCancel: {
      let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward and wakes every sleeper whose deadline has passed.
  func advance(by duration: Duration) {
    let due = state.withLock { state in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers.removeValue(forKey: id) }
      return due.values.map(\.continuation)
    }
    for continuation in due { continuation.resume() }
  }

  /// Returns once at least `count` tasks are sleeping on this clock.
  func waitForSleepers(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state in
        if state.sleepers.count >= count { return true }
        state.waiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private static func satisfiedWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
    let count = state.sleepers.count
    let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
    state.waiters.removeAll { $0.count <= count }
    return ready
  }
}
