import CSystemShims
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The one way to start a thread of our own: a named, detached POSIX thread, for the
/// ``EventLoop`` and the few sources measured to be better on a thread of their own.
public enum SystemThread {
  private final class Body: Sendable {
    let name: String
    let run: @Sendable () -> Void
    init(name: String, run: @escaping @Sendable () -> Void) {
      self.name = name
      self.run = run
    }
  }

  /// Starts `body` on a new detached thread named `name` (at most 15 bytes are shown). Created
  /// detached, so no moment exists in which it could end unjoined (a process exiting then shows
  /// ThreadSanitizer a leaked thread).
  public static func detach(name: String, _ body: @escaping @Sendable () -> Void)
    throws(SystemCallError)
  {
    _ = try start(name: name, detached: true, body)
  }

  /// Runs `body` on a new thread named `name` and waits for it to finish: for short work that
  /// changes thread-local kernel state (a `setns` into another network namespace).
  public static func runAndWait<Result: Sendable>(
    name: String, _ body: @escaping @Sendable () -> Result
  ) throws(SystemCallError) -> Result {
    let slot = ResultSlot<Result>()
    let thread = try start(name: name) { slot.store(body()) }
    pthread_join(thread, nil)
    return slot.take()!
  }

  private static func start(
    name: String, detached: Bool = false, _ body: @escaping @Sendable () -> Void
  ) throws(SystemCallError) -> pthread_t {
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
    let context = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
    let status = pthread_create(
      &thread, &attributes,
      { context in
        let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
        _ = csystem_set_thread_name(body.name)
        body.run()
        return nil
      }, context)
    guard status == 0 else {
      Unmanaged<Body>.fromOpaque(context).release()
      throw SystemCallError("pthread_create", errno: Errno(rawValue: status))
    }
    return thread
  }

  /// Runs `body`, which blocks (`flock`, a `usleep` loop), on a thread of its own and returns
  /// its result: a caller on the Swift concurrency pool never holds one of its fixed threads.
  public static func runBlocking<Result: Sendable>(
    name: String, _ body: @escaping @Sendable () throws -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      do {
        try detach(name: name) { continuation.resume(with: Swift.Result { try body() }) }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }
}
