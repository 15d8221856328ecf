import CThreadSanitizer
import Synchronization

/// A `Synchronization.Mutex` whose acquire and release ThreadSanitizer can see.
///
/// On Linux, `Mutex` waits for a contended lock with raw futex system calls that ThreadSanitizer
/// does not intercept, so under `swift test --sanitize=thread` it sees no order between two
/// threads' `withLock` bodies and reports their accesses as races. `Lock` reports each acquire
/// and release to ThreadSanitizer; without ThreadSanitizer these reports do nothing. Use it
/// like `Mutex`: decide under the lock, never hold it across an `await`.
public struct Lock<Value: ~Copyable>: ~Copyable {
  @usableFromInline let mutex: Mutex<Value>

  /// A lock protecting `initialValue`.
  public init(_ initialValue: consuming sending Value) {
    mutex = Mutex(initialValue)
  }

  /// Runs `body` with exclusive access to the protected value and returns what it returns.
  /// Inlinable, so that callers in other modules get it specialized for their value (no
  /// generic metadata looked up per call on hot paths).
  @inlinable
  public borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    // A borrowed noncopyable value is never copied, so this is the lock's own, stable address;
    // ThreadSanitizer uses it only as the lock's name, it is never read through.
    let lock = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
    return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
      cthreadsanitizer_acquired(lock)
      defer { cthreadsanitizer_releasing(lock) }
      return try body(&value)
    }
  }
}

extension Lock: Sendable where Value: ~Copyable {}
