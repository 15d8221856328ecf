public import Backgrounder
import Locking

/// Records a runtime's events and lets a test wait for the ones it expects (no sleeping).
public final class EventRecorder: Sendable {
  private struct Waiter {
    var id: Int
    var predicate: @Sendable (MonitorEvent) -> Bool
    var count: Int
    var continuation: CheckedContinuation<[MonitorEvent], Never>
    /// Ends the wait when its time is up (a bounded ``wait(count:timeout:for:)``).
    var timer: Task<Void, Never>?
  }

  private struct State {
    var events: [MonitorEvent] = []
    var waiters: [Waiter] = []
    var nextWaiter = 0
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
            waiter.timer?.cancel()
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
    await wait(count: count, timeout: nil, for: predicate)
  }

  /// Waits until at least `count` recorded events match `predicate`, or until `timeout` of real
  /// time has passed (whatever clock the runtime uses); returns all that match, fewer than
  /// `count` when the time ran out. The bound is a safety net: a test waits on events, and one
  /// whose events never come fails instead of hanging its whole run.
  @discardableResult
  public func wait(
    count: Int = 1, timeout: Duration?, for predicate: @escaping @Sendable (MonitorEvent) -> Bool
  ) async -> [MonitorEvent] {
    await withCheckedContinuation { continuation in
      let ready = box.state.withLock { state -> [MonitorEvent]? in
        let matching = state.events.filter(predicate)
        if matching.count >= count { return matching }
        let id = state.nextWaiter
        state.nextWaiter += 1
        let timer = timeout.map { timeout in
          Task { [box] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            Self.expire(id, in: box)
          }
        }
        state.waiters.append(
          Waiter(
            id: id, predicate: predicate, count: count, continuation: continuation, timer: timer))
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// Ends the wait `id` with the events matching so far, if it is still waiting.
  private static func expire(_ id: Int, in box: Box) {
    let expired = box.state.withLock { state -> (Waiter, [MonitorEvent])? in
      guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
      let waiter = state.waiters.remove(at: index)
      return (waiter, state.events.filter(waiter.predicate))
    }
    if let (waiter, matching) = expired { waiter.continuation.resume(returning: matching) }
  }
}
