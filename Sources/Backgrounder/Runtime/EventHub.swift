import Locking

/// Fans events out to every `events()` subscriber.
final class EventHub: Sendable {
  private struct Subscriber {
    var continuation: AsyncStream<MonitorEvent>.Continuation
    /// The events this subscriber takes (the others never enter its buffer).
    var isIncluded: @Sendable (MonitorEvent) -> Bool
  }

  private struct State {
    var nextId = 0
    var subscribers: [Int: Subscriber] = [:]
  }
  private let state = Lock(State())
  /// Held for a whole `emit` so that concurrent emitters never interleave their events. The
  /// subscribers are yielded to outside `state`'s lock: cancelling a subscriber runs its
  /// termination handler (which takes that lock) from inside the subscriber task's own lock,
  /// which a yield that resumes the subscriber needs too.
  private let ordering = Lock(())

  func subscribe(
    bufferingPolicy: AsyncStream<MonitorEvent>.Continuation.BufferingPolicy,
    where isIncluded: @escaping @Sendable (MonitorEvent) -> Bool = { _ in true }
  ) -> AsyncStream<MonitorEvent> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: MonitorEvent.self, bufferingPolicy: bufferingPolicy)
    let id = state.withLock { state in
      state.nextId += 1
      state.subscribers[state.nextId] = Subscriber(
        continuation: continuation, isIncluded: isIncluded)
      return state.nextId
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  func emit(_ events: some Sequence<MonitorEvent>) {
    ordering.withLock { _ in
      let subscribers = state.withLock { Array($0.subscribers.values) }
      for event in events {
        for subscriber in subscribers where subscriber.isIncluded(event) {
          subscriber.continuation.yield(event)
        }
      }
    }
  }

  func finish() {
    let continuations = state.withLock { state in
      defer { state.subscribers.removeAll() }
      return state.subscribers.values.map(\.continuation)
    }
    for continuation in continuations { continuation.finish() }
  }
}
