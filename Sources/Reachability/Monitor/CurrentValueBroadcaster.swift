/// Fans a changing value out to independent `AsyncStream` subscribers and to synchronous
/// observers: each new stream subscriber first gets the current value (when there is one), then
/// every later one; an observer gets every value published after it was added.
///
/// Not thread-safe by itself: the owner keeps it inside its `Lock`, decides under the lock and
/// acts after it: ``publish(_:)`` and ``finish()`` hand the recipients back, to be delivered to
/// or finished once the lock is released (finishing runs termination handlers, which take that
/// lock to unsubscribe). An owner that publishes from more than one thread delivers under a
/// second lock of its own, taken before the state lock, so that recipients see the values in
/// the order they were published.
struct CurrentValueBroadcaster<Element: Sendable>: Sendable {
  /// How many unread values a slow subscriber may fall behind before old ones are dropped.
  static var bufferLimit: Int { 1024 }

  /// Where a published value goes.
  enum Recipient: Sendable {
    /// An `AsyncStream` subscriber.
    case stream(AsyncStream<Element>.Continuation)
    /// A function called on the publishing thread.
    case observer(@Sendable (Element) -> Void)

    /// Hands `value` over: yields it to the stream, or calls the observer.
    func deliver(_ value: Element) {
      switch self {
      case .stream(let continuation): continuation.yield(value)
      case .observer(let observer): observer(value)
      }
    }
  }

  private var subscribers: [Int: Recipient] = [:] {
    didSet { recipients = Array(subscribers.values) }
  }
  /// ``subscribers``' values, kept as an array so that publishing allocates nothing.
  private var recipients: [Recipient] = []
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
    let id = takeID()
    subscribers[id] = .stream(continuation)
    continuation.onTermination = { _ in onTermination(id) }
    return stream
  }

  /// Adds an observer of every later value, until ``finish()``. The caller hands it the
  /// current value itself (outside its state lock), if it wants it.
  mutating func observe(_ observer: @escaping @Sendable (Element) -> Void) {
    guard !isFinished else { return }
    subscribers[takeID()] = .observer(observer)
  }

  mutating func unsubscribe(_ id: Int) { subscribers[id] = nil }

  /// Makes `value` current and hands back the recipients it goes to. The caller delivers to
  /// them *after* releasing its lock: resuming a waiting consumer takes that consumer task's
  /// lock, and cancelling a consumer takes the owner's lock from inside the task's (its
  /// termination handler), so yielding under the owner's lock can deadlock.
  mutating func publish(_ value: Element) -> [Recipient] {
    current = value
    return recipients
  }

  /// Marks the broadcaster finished, drops the observers and hands back the open streams, which
  /// the caller must `finish()` *after* releasing its lock. Later subscribers get the current
  /// value and an ended stream.
  mutating func finish() -> [AsyncStream<Element>.Continuation] {
    isFinished = true
    defer { subscribers = [:] }
    return subscribers.values.compactMap { recipient in
      guard case .stream(let continuation) = recipient else { return nil }
      return continuation
    }
  }

  private mutating func takeID() -> Int {
    defer { nextID += 1 }
    return nextID
  }
}
