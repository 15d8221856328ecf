public import Backgrounder
import Broadcasting
import Locking

/// A condition source the test sets by hand; each subscriber gets the current value first,
/// then every ``set(_:)``. Fans out through `Broadcaster`, delivering outside its lock.
public final class FakeConditionSource<Value: Sendable & Equatable>: Sendable {
  private let state: Lock<Broadcaster<Value>>
  /// Held while a value is set and delivered, so that concurrent ``set(_:)`` calls reach every
  /// subscriber in the same order.
  private let delivery = Lock(())

  /// Creates a source reporting `initial`.
  public init(_ initial: Value) {
    state = Lock(Broadcaster(latest: initial))
  }

  /// The value right now.
  public var current: Value {
    state.withLock { broadcaster in
      guard let latest = broadcaster.latest else { preconditionFailure("set at creation") }
      return latest
    }
  }

  /// A new subscription: the current value, then each change.
  public func updates() -> AsyncStream<Value> {
    state.withLock { broadcaster in
      broadcaster.subscribe(bufferingPolicy: .unbounded) { [weak self] id in
        self?.state.withLock { $0.unsubscribe(id) }
      }
    }
  }

  /// Changes the value and delivers it to every subscriber (after releasing the state lock: a
  /// subscriber cancelled meanwhile takes that lock to unsubscribe).
  public func set(_ value: Value) {
    delivery.withLock { _ in
      for recipient in state.withLock({ $0.publish(value) }) { recipient.deliver(value) }
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
