/// Fans a changing value out to independent `AsyncStream` subscribers: each new subscriber
/// first gets the current value (when there is one), then every later one.
///
/// Not thread-safe by itself: the owner keeps it inside its `Mutex`, decides under the lock and
/// acts after it: ``publish(_:)`` and ``finish()`` hand the streams back, to be yielded to or
/// finished once the lock is released (finishing runs termination handlers, which take that lock
/// to unsubscribe).
struct CurrentValueBroadcaster<Element: Sendable>: Sendable {
  /// How many unread values a slow subscriber may fall behind before old ones are dropped.
  static var bufferLimit: Int { 1024 }

  private var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
  private var nextID = 0
  private(set) var current: Element?
  private(set) var isFinished = false

  /// Adds a subscriber; the current value (if any) is its first element. `onTermination` runs
  /// with the subscriber's id when its stream ends (call ``unsubscribe(_:)`` from it).
  mutating func subscribe(onTermination: @escaping @Sendable (Int) -> Void)
    -> AsyncStream<Element>
  {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Element.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
    if let current { continuation.yield(current) }
    if isFinished {
      continuation.finish()
      return stream
    }
    let id = nextID
    nextID += 1
    subscribers[id] = continuation
    continuation.onTermination = { _ in onTermination(id) }
    return stream
  }

  mutating func unsubscribe(_ id: Int) { subscribers[id] = nil }

  /// Makes `value` current and hands back the subscribers it goes to. The caller yields to them
  /// *after* releasing its lock: resuming a waiting consumer takes that consumer task's lock, and
  /// cancelling a consumer takes the owner's lock from inside the task's (its termination
  /// handler), so yielding under the owner's lock can deadlock.
  mutating func publish(_ value: Element) -> [AsyncStream<Element>.Continuation] {
    current = value
    return Array(subscribers.values)
  }

  /// Marks the broadcaster finished and hands back the open streams, which the caller must
  /// `finish()` *after* releasing its lock. Later subscribers get the current value and an
  /// ended stream.
  mutating func finish() -> [AsyncStream<Element>.Continuation] {
    isFinished = true
    defer { subscribers = [:] }
    return Array(subscribers.values)
  }
}
