import Locking

/// A one-shot value: the first `resolve` wins, later ones are ignored; any number of tasks may
/// wait for the value. This is the "completion recorded exactly once" guard.
final class Latch<Value: Sendable>: Sendable {
  private enum State {
    case waiting([CheckedContinuation<Value, Never>])
    case resolved(Value)
  }

  private let state = Lock(State.waiting([]))

  /// Resolves the latch; returns `false` if it was already resolved.
  @discardableResult
  func resolve(_ value: Value) -> Bool {
    let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
      guard case .waiting(let waiters) = state else { return nil }
      state = .resolved(value)
      return waiters
    }
    guard let waiters else { return false }
    for waiter in waiters { waiter.resume(returning: value) }
    return true
  }

  /// The value, once resolved.
  var value: Value? {
    state.withLock { state in
      if case .resolved(let value) = state { value } else { nil }
    }
  }

  /// Waits for the value.
  func wait() async -> Value {
    await withCheckedContinuation { continuation in
      let resolved = state.withLock { state -> Value? in
        switch state {
        case .resolved(let value):
          return value
        case .waiting(var waiters):
          waiters.append(continuation)
          state = .waiting(waiters)
          return nil
        }
      }
      if let resolved { continuation.resume(returning: resolved) }
    }
  }
}

/// Wakes the dispatch loop. Signals coalesce: many `fire()` calls before a `wait()` give one
/// wake-up.
final class WakeSignal: Sendable {
  private struct State {
    var pending = false
    var waiter: CheckedContinuation<Void, Never>?
  }

  private let state = Lock(State())

  func fire() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      if let waiter = state.waiter {
        state.waiter = nil
        return waiter
      }
      state.pending = true
      return nil
    }
    waiter?.resume()
  }

  /// The loop is suspended in ``wait()`` and no signal is pending.
  var isWaiting: Bool {
    state.withLock { $0.waiter != nil }
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.pending {
          state.pending = false
          return true
        }
        state.waiter = continuation
        return false
      }
      if ready { continuation.resume() }
    }
  }
}
