import Glibc
import Locking
import TestSupport
import Testing

@testable import SystemCalls

/// ``SystemThread``'s parked threads: once parking is on (a long-running process whose
/// executor has a quiet action), a thread whose body returned runs the next body instead of a
/// new thread starting; retiring ends the parked ones. Each test has a pool of its own, which
/// other suites' threads do not take from.
@Suite("System threads park")
struct SystemThreadParkingTests {
  /// Runs `body` on a thread of `parking` and returns its result.
  static func run<Result: Sendable>(
    _ name: String, parksAfter: Bool = true, in parking: SystemThread.ParkedThreads,
    _ body: @escaping @Sendable () -> Result
  ) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
      do {
        try SystemThread.detach(name: name, parksAfter: parksAfter, in: parking) {
          continuation.resume(returning: body())
        }
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }

  /// Twenty bodies one after another, each after the previous thread parked: without parking
  /// each ran on a thread of its own (twenty thread ids); with it, the one parked thread takes
  /// each, named for it.
  @Test("bodies one after another reuse the parked thread, named for each")
  func parkedThreadRunsTheNextBody() async throws {
    let parking = SystemThread.ParkedThreads()
    parking.enable(limit: 8)
    var threads = Set<String>()
    for index in 0..<20 {
      let name = "bg-park-\(index)"
      let (thread, shownName) = try await Self.run(name, in: parking) {
        (Self.threadId(), Self.threadName())
      }
      #expect(shownName == name)
      threads.insert(thread)
      #expect(await waitUntil { parking.count == 1 })
    }
    #expect(threads.count == 1, "20 bodies ran on \(threads.count) threads")
    parking.retireAll()
    #expect(await waitUntil { access(threads.first ?? "", F_OK) != 0 })
  }

  /// A parked thread holds nothing its last body captured: what only that body kept is
  /// released once it returned, not when the thread is handed the next or retired.
  @Test("a parked thread holds nothing its last body captured")
  func parkedThreadReleasesItsBody() async throws {
    final class Canary: Sendable {}
    final class Watch: @unchecked Sendable {
      weak var canary: Canary?
    }
    let parking = SystemThread.ParkedThreads()
    parking.enable(limit: 8)
    let watch = Watch()
    do {
      let canary = Canary()
      watch.canary = canary
      _ = try await Self.run("bg-canary", in: parking) { ObjectIdentifier(canary) }
    }
    #expect(await waitUntil { parking.count == 1 })
    #expect(watch.canary == nil, "the parked thread keeps its last body's captures")
    parking.retireAll()
  }

  /// A thread ends after its body without parking turned on (a one-shot command), and with it
  /// when started with `parksAfter: false` (the executor's helpers, which park themselves, and
  /// the quiet action's own thread).
  @Test(
    "a thread ends after its body unless parking is on and it parks after",
    arguments: [(parkingOn: false, parksAfter: true), (parkingOn: true, parksAfter: false)])
  func threadEnds(parkingOn: Bool, parksAfter: Bool) async throws {
    let parking = SystemThread.ParkedThreads()
    if parkingOn { parking.enable(limit: 8) }
    let thread = try await Self.run("bg-no-park", parksAfter: parksAfter, in: parking) {
      Self.threadId()
    }
    #expect(await waitUntil { access(thread, F_OK) != 0 }, "\(thread) is still there")
    #expect(parking.count == 0)
  }

  /// No more threads park than the limit: the others end.
  @Test("at most the limit parks")
  func atMostTheLimitParks() async throws {
    let parking = SystemThread.ParkedThreads()
    parking.enable(limit: 2)
    let release = Lock(false)
    let started = Lock(0)
    for index in 0..<4 {
      try SystemThread.detach(name: "bg-limit-\(index)", parksAfter: true, in: parking) {
        started.withLock { $0 += 1 }
        while !release.withLock({ $0 }) { usleep(1000) }
      }
    }
    #expect(await waitUntil { started.withLock { $0 } == 4 })
    release.withLock { $0 = true }
    #expect(await waitUntil { parking.count == 2 })
    try await Task.sleep(for: .milliseconds(20))
    #expect(parking.count == 2)
    parking.retireAll()
    #expect(parking.count == 0)
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
