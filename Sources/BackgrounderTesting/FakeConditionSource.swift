public import Backgrounder
import Locking

/// A condition source the test sets by hand; each subscriber gets the current value first,
/// then every ``set(_:)``.
public final class FakeConditionSource<Value: Sendable & Equatable>: Sendable {
  private struct State {
    var current: Value
    var nextId = 0
    var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
  }

  private let state: Lock<State>

  /// Creates a source reporting `initial`.
  public init(_ initial: Value) {
    state = Lock(State(current: initial))
  }

  /// The value right now.
  public var current: Value { state.withLock { $0.current } }

  /// A new subscription: the current value, then each change.
  public func updates() -> AsyncStream<Value> {
    let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
    let id = state.withLock { state in
      state.nextId += 1
      state.subscribers[state.nextId] = continuation
      continuation.yield(state.current)
      return state.nextId
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Changes the value and delivers it to every subscriber.
  public func set(_ value: Value) {
    state.withLock { state in
      state.current = value
      for continuation in state.subscribers.values { continuation.yield(value) }
    }
  }
}

/// Fake network conditions for tests.
public typealias FakeNetworkSource = FakeConditionSource<NetworkConditions>
/// Fake power conditions for tests.
public typealias FakePowerSource = FakeConditionSource<PowerConditions>
/// Fake mount conditions for tests.
public typealias FakeMountSource = FakeConditionSource<MountConditions>

extension FakeConditionSource: NetworkConditionSource where Value == NetworkConditions {}
extension FakeConditionSource: PowerConditionSource where Value == PowerConditions {}
extension FakeConditionSource: MountConditionSource where Value == MountConditions {}

/// Fake destination conditions for tests.
public typealias FakeDestinationSource = FakeConditionSource<DestinationConditions>
extension FakeConditionSource: DestinationConditionSource where Value == DestinationConditions {}

/// Fake idle conditions of the user for tests (`requiresIdle`).
public typealias FakeUserIdleSource = FakeConditionSource<UserIdleConditions>
extension FakeConditionSource: UserIdleConditionSource where Value == UserIdleConditions {}
