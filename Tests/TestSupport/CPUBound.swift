import Foundation
import Testing

/// The threads CPU-bound tests run on, instead of Swift concurrency's cooperative pool.
///
/// `swift test` starts every suite at once on a pool of about one thread per core. Property
/// and differential tests compute for tens of seconds: on a 2-core machine `gdb` showed both
/// pool threads in them 12 s into a run while integration tests' readers waited, and when
/// they yielded instead, every yield put them back in the queue the other tests wait in. Here
/// the kernel shares the cores between these threads and the pool's.
final class CPUBoundExecutor: TaskExecutor, @unchecked Sendable {
  static let shared = CPUBoundExecutor(
    threads: max(1, ProcessInfo.processInfo.activeProcessorCount))

  /// Guards `jobs`; signalled when a job is added.
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []

  private init(threads: Int) {
    for _ in 0..<threads {
      Thread { [self] in
        // A new thread inherits its creator's name, and Foundation does not set this one.
        try? "cpu-bound".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        work()
      }.start()
    }
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    condition.signal()
    condition.unlock()
  }

  private func work() {
    while true {
      condition.lock()
      while jobs.isEmpty { condition.wait() }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// Each test of the suite runs on ``CPUBoundExecutor``'s threads.
public struct CPUBoundTrait: SuiteTrait, TestTrait, TestScoping {
  public typealias TestScopeProvider = Self
  public var isRecursive: Bool { true }

  /// Test cases only. Keep it: with the default provider instead, two whole runs in a row had
  /// 5 and 6 daemon tests miss their 20 s waits, and the next run with this one passed (not
  /// understood; the trait's own test passed either way).
  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    testCase == nil ? nil : self
  }

  public func provideScope(
    for test: Test, testCase: Test.Case?,
    performing function: @Sendable () async throws -> Void
  ) async throws {
    guard testCase != nil else { return try await function() }
    try await withTaskExecutorPreference(CPUBoundExecutor.shared) { try await function() }
  }
}

extension Trait where Self == CPUBoundTrait {
  /// The suite computes for a long time: it runs on threads of its own, not the cooperative
  /// pool the run's other tests wait on (``CPUBoundExecutor``).
  public static var cpuBound: Self { Self() }
}
