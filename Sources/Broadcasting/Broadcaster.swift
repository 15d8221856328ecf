/// The package's one fan-out (statuses, conditions, clock changes, the runtime's events, the
/// test kit's fakes): values to independent `AsyncStream` subscribers and to synchronous
/// observers. With `replaysLatest` (a current value: a network or power status) each new
/// stream subscriber first gets the latest value, then every later one; without it (events: a
/// clock change) only the later ones. An observer gets every value published after it was
/// added.
///
/// Not thread-safe by itself: the owner keeps it inside its `Lock`, decides under the lock and
/// acts after it: ``publish(_:)`` and ``finish()`` hand the recipients back, to be delivered to
/// or finished once the lock is released (finishing runs termination handlers, which take that
/// lock to unsubscribe). An owner that publishes from more than one thread delivers under a
/// second lock of its own, taken before the state lock, so that recipients see the values in
/// the order they were published. Inlinable: the network monitor publishes through it on every
/// change, where an unspecialized generic would cost more than the fan-out.
public struct Broadcaster<Element: Sendable>: Sendable {
  /// Where a published value goes.
  public enum Recipient: Sendable {
    /// An `AsyncStream` subscriber.
    case stream(AsyncStream<Element>.Continuation)
    /// An `AsyncStream` subscriber that takes only the values `isIncluded` accepts (the others
    /// never enter its buffer).
    case filteredStream(
      AsyncStream<Element>.Continuation, isIncluded: @Sendable (Element) -> Bool)
    /// A function called on the publishing thread.
    case observer(@Sendable (Element) -> Void)

    /// Hands `value` over: yields it to the stream, or calls the observer.
    @inlinable public func deliver(_ value: Element) {
      switch self {
      case .stream(let continuation): continuation.yield(value)
      case .filteredStream(let continuation, let isIncluded):
        if isIncluded(value) { continuation.yield(value) }
      case .observer(let observer): observer(value)
      }
    }
  }

  @usableFromInline let replaysLatest: Bool
  @usableFromInline let bufferLimit: Int
  @usableFromInline var subscribers: [Int: Recipient] = [:] {
    didSet { recipients = Array(subscribers.values) }
  }
  /// `subscribers`' values, kept as an array so that publishing allocates nothing.
  @usableFromInline var recipients: [Recipient] = []
  @usableFromInline var nextID = 0
  @usableFromInline var storedLatest: Element?
  @usableFromInline var finished = false

  /// The last value published (or given to `init`).
  @inlinable public var latest: Element? { storedLatest }

  /// - Parameters:
  ///   - latest: The value a subscriber gets first until one is published (with
  ///     `replaysLatest`).
  ///   - replaysLatest: Whether a new stream subscriber first gets the latest value.
  ///   - bufferLimit: How many unread values a slow stream subscriber may fall behind before
  ///     the oldest are dropped.
  @inlinable public init(
    latest: Element? = nil, replaysLatest: Bool = true, bufferLimit: Int = 1024
  ) {
    precondition(bufferLimit > 0, "a subscriber needs room for one value")
    storedLatest = latest
    self.replaysLatest = replaysLatest
    self.bufferLimit = bufferLimit
  }

  /// Adds a stream subscriber. `onTermination` runs with the subscriber's id when its stream
  /// ends (call ``unsubscribe(_:)`` from it). After ``finish()`` the stream is already ended
  /// (after the latest value, with `replaysLatest`).
  @inlinable public mutating func subscribe(onTermination: @escaping @Sendable (Int) -> Void)
    -> AsyncStream<Element>
  {
    subscribe(bufferingPolicy: .bufferingNewest(bufferLimit), onTermination: onTermination)
  }

  /// Adds a stream subscriber with its own buffering policy (instead of the broadcaster's
  /// `bufferLimit`) that takes only the values `isIncluded` accepts, the latest one included;
  /// otherwise as ``subscribe(onTermination:)``.
  @inlinable public mutating func subscribe(
    bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
    where isIncluded: (@Sendable (Element) -> Bool)? = nil,
    onTermination: @escaping @Sendable (Int) -> Void
  ) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Element.self, bufferingPolicy: bufferingPolicy)
    if replaysLatest, let storedLatest, isIncluded?(storedLatest) ?? true {
      continuation.yield(storedLatest)
    }
    if finished {
      continuation.finish()
      return stream
    }
    let id = takeID()
    if let isIncluded {
      subscribers[id] = .filteredStream(continuation, isIncluded: isIncluded)
    } else {
      subscribers[id] = .stream(continuation)
    }
    continuation.onTermination = { _ in onTermination(id) }
    return stream
  }

  /// Adds an observer of every later value, until ``finish()``. The caller hands it the
  /// latest value itself (outside its state lock), if it wants it.
  @inlinable public mutating func observe(_ observer: @escaping @Sendable (Element) -> Void) {
    guard !finished else { return }
    subscribers[takeID()] = .observer(observer)
  }

  /// Removes the subscriber or observer with this id.
  @inlinable public mutating func unsubscribe(_ id: Int) { subscribers[id] = nil }

  /// Makes `value` the latest and hands back the recipients it goes to. The caller delivers to
  /// them *after* releasing its lock: resuming a waiting consumer takes that consumer task's
  /// lock, and cancelling a consumer takes the owner's lock from inside the task's (its
  /// termination handler), so yielding under the owner's lock can deadlock.
  @inlinable public mutating func publish(_ value: Element) -> [Recipient] {
    storedLatest = value
    return recipients
  }

  /// Marks the broadcaster finished, drops the observers and hands back the open streams, which
  /// the caller must `finish()` *after* releasing its lock.
  @inlinable public mutating func finish() -> [AsyncStream<Element>.Continuation] {
    finished = true
    defer { subscribers = [:] }
    return subscribers.values.compactMap { recipient in
      switch recipient {
      case .stream(let continuation), .filteredStream(let continuation, _): continuation
      case .observer: nil
      }
    }
  }

  @inlinable mutating func takeID() -> Int {
    defer { nextID += 1 }
    return nextID
  }
}
