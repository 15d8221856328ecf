public import Backgrounder
import Broadcasting
public import Foundation
import Locking

/// A wall clock that only moves when told to. Sleepers wake when ``advance(by:)`` or
/// ``advance(to:)`` reaches their deadline; tests never sleep for real. ``jump(by:)`` steps the
/// clock as `date -s` or an NTP step would and reports it as a ``ClockChangeSource``.
public final class ManualClock: WallClock, ClockChangeSource {
  private struct Sleeper {
    var deadline: WallInstant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct Watcher {
    var predicate: @Sendable (Date) -> Bool
    var count: Int
    var continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var now: WallInstant
    var nextId: UInt64 = 0
    var sleepers: [UInt64: Sleeper] = [:]
    var cancelled: Set<UInt64> = []
    var watchers: [Watcher] = []
    var changeCount: UInt64 = 0
  }

  private let state: Lock<State>
  /// The ``clockChanges()`` subscribers: one pending element each at most, as a real clock
  /// change source keeps.
  private let changes = Lock(Broadcaster<Void>(replaysLatest: false, bufferLimit: 1))

  /// Creates a clock reading `now` (default: 2023-11-14T22:13:20Z).
  public init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
    state = Lock(State(now: WallInstant(now)))
  }

  /// The current instant.
  public var now: WallInstant { state.withLock { $0.now } }

  /// The current time as a `Date`.
  public var date: Date { now.date }

  /// One nanosecond.
  public var minimumResolution: Duration { .nanoseconds(1) }

  /// Suspends until the clock is advanced to `deadline` (returns at once if it already is).
  public func sleep(until deadline: WallInstant, tolerance: Duration?) async throws {
    try Task.checkCancellation()
    let id = state.withLock { state -> UInt64 in
      state.nextId += 1
      return state.nextId
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let (immediate, watchers) = state.withLock {
          state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
          if state.cancelled.remove(id) != nil { return (.failure(CancellationError()), []) }
          if deadline <= state.now { return (.success(()), []) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          var woken: [CheckedContinuation<Void, Never>] = []
          let deadlines = state.sleepers.values.map(\.deadline.date)
          state.watchers.removeAll { watcher in
            guard deadlines.filter(watcher.predicate).count >= watcher.count else { return false }
            woken.append(watcher.continuation)
            return true
          }
          return (nil, woken)
        }
        for watcher in watchers { watcher.resume() }
        if let immediate { continuation.resume(with: immediate) }
      }
    } onCancel: {
      let sleeper = state.withLock { state -> Sleeper? in
        if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
        state.cancelled.insert(id)
        return nil
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves the clock forward by `duration` and wakes every sleeper whose deadline passed.
  public func advance(by duration: Duration) {
    let target = state.withLock { $0.now.advanced(by: duration) }
    advance(to: target)
  }

  /// Moves the clock to `instant` (never backwards) and wakes every sleeper whose deadline
  /// passed, earliest first.
  public func advance(to instant: WallInstant) {
    let due = state.withLock { state -> [Sleeper] in
      if instant > state.now { state.now = instant }
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers.removeValue(forKey: id) }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for sleeper in due { sleeper.continuation.resume() }
  }

  /// Steps the clock by `offset` (forward or backward) as a wall-clock change does: sleepers are
  /// not woken — a real sleep is measured on a monotonic clock and does not notice the step —
  /// but every ``clockChanges()`` stream gets an element.
  public func jump(by offset: Duration) {
    state.withLock {
      $0.now = $0.now.advanced(by: offset)
      $0.changeCount += 1
    }
    for recipient in changes.withLock({ $0.publish(()) }) { recipient.deliver(()) }
  }

  /// How many times ``jump(by:)`` stepped the clock.
  public var changeCount: UInt64 { state.withLock { $0.changeCount } }

  /// One element per ``jump(by:)``.
  public func clockChanges() -> AsyncStream<Void> {
    changes.withLock { broadcaster in
      broadcaster.subscribe { [weak self] id in
        self?.changes.withLock { $0.unsubscribe(id) }
      }
    }
  }

  /// The deadlines of the current sleepers, earliest first.
  public var sleeperDeadlines: [Date] {
    state.withLock { $0.sleepers.values.map(\.deadline.date).sorted() }
  }

  /// Waits until at least `count` tasks sleep until deadlines matching `predicate` (tasks
  /// already asleep count). Lets a test advance the clock only once the code under test waits.
  public func waitForSleepers(
    count: Int = 1, where predicate: @escaping @Sendable (Date) -> Bool
  ) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let found = state.withLock { state -> Bool in
        if state.sleepers.values.filter({ predicate($0.deadline.date) }).count >= count {
          return true
        }
        state.watchers.append(
          Watcher(predicate: predicate, count: count, continuation: continuation))
        return false
      }
      if found { continuation.resume() }
    }
  }

  /// Waits until at least `count` tasks sleep until exactly `deadline`.
  public func waitForSleepers(count: Int = 1, until deadline: Date) async {
    let target = WallInstant(deadline)
    await waitForSleepers(count: count) { WallInstant($0) == target }
  }
}
