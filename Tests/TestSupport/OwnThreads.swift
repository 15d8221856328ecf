import Foundation
import Testing

/// Threads of its own that tests run on instead of Swift concurrency's cooperative pool.
///
/// `swift test` starts every suite at once on a pool of one thread per core (2 on CI), and
/// Foundation's and Dispatch's callbacks (a `Process`'s exit, a `DispatchSource`) wait in the
/// same queue. `gdb` samples of a run showed both pool threads, for tens of seconds, either
/// computing in property tests or blocked in integration tests' helpers (`Process`
/// `waitUntilExit`, pipe reads, `usleep`), while daemon tests' 20 s waits ran out unserved.
///
/// - ``cpuBound``: one thread per core, for suites that compute for a long time; the kernel
///   shares the cores between these threads and the pool's.
/// - ``blockingIO``: a new thread whenever every thread is busy, for suites that block on child
///   processes, pipes, sockets and the disk, so a blocked test holds only its own thread.
final class OwnThreadsExecutor: TaskExecutor, @unchecked Sendable {
  static let cpuBound = OwnThreadsExecutor(
    name: "cpu-bound", limit: max(1, ProcessInfo.processInfo.activeProcessorCount))
  static let blockingIO = OwnThreadsExecutor(name: "blocking-io", limit: nil)

  private let name: String
  /// At most this many threads; `nil`: no limit.
  private let limit: Int?
  /// Guards `jobs`, `threads` and `waiting`; signalled when a job is added.
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var threads = 0
  /// Threads waiting for a job.
  private var waiting = 0

  private init(name: String, limit: Int?) {
    self.name = name
    self.limit = limit
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    let start = jobs.count > waiting && threads < (limit ?? .max)
    if start { threads += 1 }
    condition.signal()
    condition.unlock()
    if start {
      Thread { [self] in
        // A new thread inherits its creator's name, and Foundation does not set this one.
        try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        work()
      }.start()
    }
  }

  private func work() {
    while true {
      condition.lock()
      while jobs.isEmpty {
        waiting += 1
        condition.wait()
        waiting -= 1
      }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// Each test of the suite runs on one ``OwnThreadsExecutor``'s threads.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
  public typealias TestScopeProvider = Self
  public var isRecursive: Bool { true }
  let blocking: Bool

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
    let executor = blocking ? OwnThreadsExecutor.blockingIO : OwnThreadsExecutor.cpuBound
    try await withTaskExecutorPreference(executor) { try await function() }
  }
}

extension Trait where Self == OwnThreadsTrait {
  /// The suite computes for a long time: it runs on one thread per core of its own, not the
  /// cooperative pool the run's other tests wait on (``OwnThreadsExecutor``).
  public static var cpuBound: Self { Self(blocking: false) }

  /// The suite blocks threads (child processes, pipes, sockets, `fsync`): each test runs on a
  /// thread of its own, not the cooperative pool the run's other tests wait on.
  public static var blockingIO: Self { Self(blocking: true) }
}
