/// Independent `AsyncStream` subscribers of status changes. Not thread-safe by itself: the
/// monitor keeps it inside its mutex.
struct StatusBroadcaster: Sendable {
  /// How many unread statuses a slow subscriber may fall behind before old ones are dropped.
  static let bufferLimit = 1024

  private var subscribers: [Int: AsyncStream<NetworkStatus>.Continuation] = [:]
  private var nextID = 0
  private(set) var isFinished = false

  /// Adds a subscriber; `current` (if known) is its first element.
  mutating func subscribe(
    current: NetworkStatus?, onTermination: @escaping @Sendable (Int) -> Void
  ) -> AsyncStream<NetworkStatus> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: NetworkStatus.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
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

  /// The subscribers a new status goes to. The caller yields to them *after* releasing the
  /// monitor's lock: resuming a waiting consumer takes that consumer task's lock, and cancelling
  /// a consumer takes the monitor's lock from inside the task's (its termination handler), so
  /// yielding under the monitor's lock can deadlock.
  var recipients: [AsyncStream<NetworkStatus>.Continuation] { Array(subscribers.values) }

  /// Marks the broadcaster finished and hands back the open streams, which the caller must
  /// `finish()` *after* releasing the monitor's lock (finishing runs their termination handlers,
  /// which take that lock). Later subscribers get the current status and an ended stream.
  mutating func finish() -> [AsyncStream<NetworkStatus>.Continuation] {
    isFinished = true
    defer { subscribers = [:] }
    return Array(subscribers.values)
  }
}
