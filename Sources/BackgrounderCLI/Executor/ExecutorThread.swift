import Glibc

/// Starts the executor's detached POSIX threads and names them (visible in `/proc/PID/task`).
enum ExecutorThread {
  private final class Body: Sendable {
    let name: String
    let run: @Sendable () -> Never
    init(name: String, run: @escaping @Sendable () -> Never) {
      self.name = name
      self.run = run
    }
  }

  /// Starts `run` on a new detached thread named `name` (at most 15 bytes).
  static func start(name: String, _ run: @escaping @Sendable () -> Never) {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Body(name: name, run: run)).toOpaque()
    let status = pthread_create(
      &thread, nil,
      { context in
        let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
        ExecutorThread.nameCurrentThread(body.name)
        body.run()
      }, context)
    guard status == 0 else {
      fatalError("executor: pthread_create failed: \(String(cString: strerror(status)))")
    }
    pthread_detach(thread)
  }

  /// Sets the calling thread's name through `/proc/thread-self/comm` (best effort).
  static func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = write(descriptor, bytes, bytes.count)
    close(descriptor)
  }
}
