import SystemCalls

/// Starts the executor's threads (``SystemThread``); without them the process cannot run.
enum ExecutorThreads {
  /// Starts `run` on a new detached thread named `name` (at most 15 bytes are shown).
  static func start(name: String, _ run: @escaping @Sendable () -> Void) {
    do {
      try SystemThread.detach(name: name, run)
    } catch {
      fatalError("executor: \(error)")
    }
  }
}
