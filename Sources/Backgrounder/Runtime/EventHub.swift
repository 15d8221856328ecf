import Broadcasting
import Locking

/// Fans events out to every `events()` subscriber, through the package's one fan-out,
/// `Broadcaster` (no replay: a subscriber gets the events emitted after it subscribed).
final class EventHub: Sendable {
  private let state = Lock(Broadcaster<MonitorEvent>(replaysLatest: false))
  /// Held for a whole `emit` so that concurrent emitters never interleave their events. The
  /// subscribers are yielded to outside `state`'s lock, as `Broadcaster` requires.
  private let ordering = Lock(())

  func subscribe(
    bufferingPolicy: AsyncStream<MonitorEvent>.Continuation.BufferingPolicy,
    where isIncluded: @escaping @Sendable (MonitorEvent) -> Bool = { _ in true }
  ) -> AsyncStream<MonitorEvent> {
    state.withLock { broadcaster in
      broadcaster.subscribe(bufferingPolicy: bufferingPolicy, where: isIncluded) {
        [weak self] id in
        self?.state.withLock { $0.unsubscribe(id) }
      }
    }
  }

  func emit(_ events: some Sequence<MonitorEvent>) {
    let events = Array(events)
    guard let last = events.last else { return }
    ordering.withLock { _ in
      let recipients = state.withLock { $0.publish(last) }
      for event in events {
        for recipient in recipients { recipient.deliver(event) }
      }
    }
  }

  /// Ends every stream; a later subscription ends at once.
  func finish() {
    let continuations = state.withLock { $0.finish() }
    for continuation in continuations { continuation.finish() }
  }
}
