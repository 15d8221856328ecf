import SystemCalls

/// Starts the executor's threads (``SystemThread``); without them the process cannot run.
enum ExecutorThreads {
  /// Starts `run` on a detached thread named `name` (at most 15 bytes are shown), which ends
  /// after it: the executor parks its helpers itself (``ExecutorJobQueue``).
  static func start(name: String, _ run: @escaping @Sendable () -> Void) {
    do {
      try SystemThread.detach(name: name, parksAfter: false, run)
    } catch {
      fatalError("executor: \(error)")
    }
  }
}
