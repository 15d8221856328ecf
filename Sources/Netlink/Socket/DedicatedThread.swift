import Glibc

/// A plain POSIX thread for work that blocks in the kernel (poll, recv) and must stay off the
/// Swift concurrency pool, or that must change thread-local kernel state such as the network
/// namespace.
public enum DedicatedThread {
  private final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }

  /// Starts `body` on a new detached thread.
  public static func detach(_ body: @escaping @Sendable () -> Void) throws(NetlinkSystemError) {
    let thread = try spawn(body)
    pthread_detach(thread)
  }

  /// Runs `body` on a new thread and waits for it to finish. For short, blocking work only.
  public static func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T)
    throws(NetlinkSystemError) -> T
  {
    let result = ResultSlot<T>()
    let thread = try spawn { result.store(body()) }
    pthread_join(thread, nil)
    return result.take()!
  }

  private static func spawn(_ body: @escaping @Sendable () -> Void) throws(NetlinkSystemError)
    -> pthread_t
  {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    let status = pthread_create(
      &thread, nil,
      { context in
        let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
        box.body()
        return nil
      }, context)
    guard status == 0 else {
      Unmanaged<Box>.fromOpaque(context).release()
      throw NetlinkSystemError(operation: "pthread_create", errno: status)
    }
    return thread
  }
}
