import Locking

/// Hands one value from a thread to the thread that joins it.
final class ResultSlot<T: Sendable>: Sendable {
  private let value = Lock<T?>(nil)

  func store(_ newValue: T) { value.withLock { $0 = newValue } }

  func take() -> T? { value.withLock { $0.take() } }
}
