import Glibc
import Locking
import SystemCalls
import TestSupport
import Testing

/// ``SystemThread``'s parked threads: once parking is on (a long-running process whose
/// executor has a quiet action), a thread whose body returned runs the next body instead of a
/// new thread starting; retiring ends the parked ones. The pool is the process's: other suites'
/// threads may take a parked thread meanwhile, so the counts below are bounds, not exact.
@Suite("System threads park", .serialized)
struct SystemThreadParkingTests {
  /// Twenty blocking calls one after another, each after the previous thread parked: without
  /// parking each ran on a thread of its own (twenty thread ids); with it, a parked thread
  /// takes the next, named for it.
  @Test("blocking calls one after another reuse a parked thread, named for each call")
  func parkedThreadRunsTheNextBody() async throws {
    SystemThread.parkFinishedThreads()
    var threads = Set<String>()
    for index in 0..<20 {
      let name = "bg-park-\(index)"
      let (thread, shownName) = try await SystemThread.runBlocking(name: name) {
        (Self.threadId(), Self.threadName())
      }
      #expect(shownName == name)
      threads.insert(thread)
      #expect(await waitUntil { SystemThread.parkedThreadCount > 0 })
    }
    #expect(threads.count <= 5, "20 calls ran on \(threads.count) threads")
    SystemThread.retireParkedThreads()
  }

  /// A thread started with `parksAfter: false` ends after its body, even while threads park
  /// (the executor's helpers, which park themselves, and the quiet action's own thread).
  @Test("a thread that does not park after its body ends")
  func threadThatDoesNotParkEnds() async throws {
    SystemThread.parkFinishedThreads()
    let thread = Lock<String?>(nil)
    try SystemThread.detach(name: "bg-no-park", parksAfter: false) {
      thread.withLock { $0 = Self.threadId() }
    }
    #expect(await waitUntil { thread.withLock { $0 } != nil })
    let path = try #require(thread.withLock { $0 })
    #expect(await waitUntil { access(path, F_OK) != 0 }, "\(path) is still there")
  }

  /// Retiring ends the threads parked now: their `/proc/self/task` entries go.
  @Test("retiring ends the parked threads")
  func retiredThreadsEnd() async throws {
    SystemThread.parkFinishedThreads()
    let thread = try await SystemThread.runBlocking(name: "bg-retire") { Self.threadId() }
    #expect(await waitUntil { SystemThread.parkedThreadCount > 0 })
    SystemThread.retireParkedThreads()
    #expect(await waitUntil { access(thread, F_OK) != 0 }, "\(thread) is still there")
  }

  /// `/proc/PID/task/TID` of the calling thread (where `/proc/thread-self` links): it exists
  /// while the thread does, and a new thread gets another.
  static func threadId() -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard count > 0 else { return "" }
    let link = buffer[..<count].map { UInt8(bitPattern: $0) }
    return "/proc/" + String(decoding: link, as: UTF8.self)
  }

  /// The calling thread's name as the kernel shows it.
  static func threadName() -> String {
    let bytes = (try? readSmallFile("/proc/thread-self/comm", limit: 64)) ?? []
    return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
  }
}
