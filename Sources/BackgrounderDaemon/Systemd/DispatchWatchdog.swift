import Backgrounder
import Locking

/// Decides, once per watchdog period, whether the daemon deserves a `WATCHDOG=1`: only when the
/// runtime's dispatch loop made progress since the previous period (it iterated, or it is idle
/// in its sleep). The pings come from the watchdog period alone, so an idle daemon wakes up
/// once per half `WatchdogSec` and its dispatch loop not at all.
package final class DispatchWatchdog: Sendable {
  private let sample: @Sendable () -> DispatchLoopProgress?
  private let previous = Lock<DispatchLoopProgress?>(nil)

  /// `sample` reads the loop's progress; `nil` (the runtime is not running) counts as stuck.
  package init(sample: @escaping @Sendable () -> DispatchLoopProgress?) {
    self.sample = sample
  }

  /// Whether the loop made progress since the previous call (the first call only needs a
  /// running loop).
  package func isHealthy() -> Bool {
    guard let current = sample() else { return false }
    let last = previous.withLock { last in
      defer { last = current }
      return last
    }
    return last.map { current.madeProgress(since: $0) } ?? true
  }
}
