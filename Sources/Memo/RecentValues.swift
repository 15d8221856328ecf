/// A memo of the values computed for the last few keys. Network states often go
/// back and forth between a few (a default route added and removed, a link down and up): what
/// was computed for one of them is handed out again, the very same storage, so that comparing
/// and encoding it later is cheap too. Inlinable: the model and the encoders use it on hot
/// paths, where an unspecialized generic would cost more than it saves.
public struct RecentValues<Key, Value> {
  @usableFromInline var entries: [(key: Key, value: Value)] = []
  @usableFromInline let capacity: Int

  /// Keeps up to `capacity` values.
  @inlinable public init(capacity: Int = 2) {
    precondition(capacity > 0, "RecentValues needs room for one value")
    self.capacity = capacity
  }

  /// The value of the newest key that `matches`; `nil` when none does.
  @inlinable public func value(where matches: (Key) -> Bool) -> Value? {
    for entry in entries where matches(entry.key) { return entry.value }
    return nil
  }

  /// Keeps `value` for `key` as the newest, dropping the oldest kept beyond the capacity.
  @inlinable public mutating func insert(_ value: Value, for key: Key) {
    entries.insert((key, value), at: 0)
    if entries.count > capacity { entries.removeLast() }
  }

  /// Forgets every value.
  @inlinable public mutating func removeAll() {
    entries.removeAll()
  }
}

extension RecentValues where Key: Equatable {
  /// The value kept for `key`; `nil` when there is none.
  @inlinable public func value(for key: Key) -> Value? {
    for entry in entries where entry.key == key { return entry.value }
    return nil
  }
}

extension RecentValues: Sendable where Key: Sendable, Value: Sendable {}
