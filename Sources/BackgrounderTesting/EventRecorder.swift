public import Backgrounder
import Locking

/// Records a runtime's events and lets a test wait for the ones it expects (no sleeping).
public final class EventRecorder: Sendable {
  private struct Waiter {
    var predicate: @Sendable (MonitorEvent) -> Bool
    var count: Int
    var continuation: CheckedContinuation<[MonitorEvent], Never>
  }

  private struct State {
    var events: [MonitorEvent] = []
    var waiters: [Waiter] = []
  }

  private final class Box: Sendable {
    let state = Lock(State())
  }

  private let box = Box()
  private let task: Lock<Task<Void, Never>?> = Lock(nil)

  /// Subscribes to `backgrounder.events()` now (call before the actions you want to observe).
  public init(_ backgrounder: Backgrounder) {
    let stream = backgrounder.events()
    let recording = Task { [box] in
      for await event in stream {
        let ready = box.state.withLock {
          state -> [(CheckedContinuation<[MonitorEvent], Never>, [MonitorEvent])] in
          state.events.append(event)
          var ready: [(CheckedContinuation<[MonitorEvent], Never>, [MonitorEvent])] = []
          let events = state.events
          state.waiters.removeAll { waiter in
            let matching = events.filter(waiter.predicate)
            guard matching.count >= waiter.count else { return false }
            ready.append((waiter.continuation, matching))
            return true
          }
          return ready
        }
        for (continuation, matching) in ready { continuation.resume(returning: matching) }
      }
    }
    task.withLock { $0 = recording }
  }

  deinit {
    task.withLock { $0?.cancel() }
  }

  /// Every event recorded so far.
  public var events: [MonitorEvent] { box.state.withLock { $0.events } }

  /// The recorded events matching `predicate`.
  public func events(where predicate: (MonitorEvent) -> Bool) -> [MonitorEvent] {
    box.state.withLock { $0.events.filter(predicate) }
  }

  /// Waits until at least `count` recorded events match `predicate`; returns all that match.
  @discardableResult
  public func wait(
    count: Int = 1, for predicate: @escaping @Sendable (MonitorEvent) -> Bool
  ) async -> [MonitorEvent] {
    await withCheckedContinuation { continuation in
      let ready = box.state.withLock { state -> [MonitorEvent]? in
        let matching = state.events.filter(predicate)
        if matching.count >= count { return matching }
        state.waiters.append(Waiter(predicate: predicate, count: count, continuation: continuation))
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }
}
