import Foundation
import TestSupport
import Testing

/// The traits that run a suite on threads of its own instead of the cooperative pool the run's
/// other tests wait on.
enum OwnThreadsTraitTests {
  static func threadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .newlines)
  }

  /// `.cpuBound`: tests, property checks included, run on the CPU-bound threads.
  @Suite(.cpuBound) struct CPUBound {
    @Test func theTestRunsOnACPUBoundThread() async {
      #expect(threadName().hasPrefix("cpu-bound"), "\(threadName())")
      await Task.yield()
      #expect(threadName().hasPrefix("cpu-bound"), "after a yield: \(threadName())")
    }
  }

  /// `.blockingIO`: a task that blocks its thread leaves the others theirs.
  @Suite(.blockingIO) struct BlockingIO {
    @Test func theTestRunsOnABlockingIOThread() async {
      #expect(threadName().hasPrefix("blocking-io"), "\(threadName())")
    }

    /// More tasks than cores block at once until all of them have arrived: on a pool of one
    /// thread per core the last ones never start (each waits 10 s, then gives up, and fewer
    /// than all arrive).
    @Test func moreTasksThanCoresCanBlockAtOnce() async {
      let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
      let barrier = Barrier(count: count)
      let arrived = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count { group.addTask { barrier.arriveAndWait(timeout: 10) } }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
      }
      #expect(arrived == count)
    }
  }

  /// Blocks each caller until `count` callers have arrived, or `timeout` seconds passed.
  final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private var arrived = 0

    init(count: Int) { self.count = count }

    /// Whether all `count` callers arrived before `timeout`.
    func arriveAndWait(timeout: TimeInterval) -> Bool {
      condition.lock()
      defer { condition.unlock() }
      arrived += 1
      condition.broadcast()
      let deadline = Date(timeIntervalSinceNow: timeout)
      while arrived < count {
        if !condition.wait(until: deadline) { return false }
      }
      return true
    }
  }
}
