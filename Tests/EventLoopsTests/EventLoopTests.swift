import CSystemShims
import EventLoops
import Foundation
import Locking
import SystemCalls
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct EventLoopTests {
  /// Components given no loop share one: however many threads ask at once, one loop is made,
  /// and it runs what it is given.
  @Test func theSharedLoopIsOneLoopForEveryCaller() async throws {
    let loops = try await withThrowingTaskGroup(of: EventLoop.self) { group in
      for _ in 0..<8 { group.addTask { try EventLoop.shared() } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(loops.count == 8)
    #expect(loops.allSatisfy { $0 === loops[0] })
    #expect(loops[0].name == "bg-events")
    #expect(await loops[0].submit { loops[0].isInLoop })
  }

  /// A loop made without a thread runs on its owner's thread: a closure, a timer and a ready
  /// descriptor's handler all run there, and the run returns once one of them stops the loop.
  @Test func aLoopWithoutAThreadRunsOnTheCallingThread() throws {
    let loop = try EventLoop(name: "test-calling", startingThread: false)
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0)
    defer { for end in ends { close(end) } }
    let caller = pthread_self()
    let ran = Lock<[String]>([])
    let onCaller = Lock(true)
    @Sendable func note(_ what: String) {
      onCaller.withLock { $0 = $0 && pthread_equal(pthread_self(), caller) != 0 && loop.isInLoop }
      ran.withLock { $0.append(what) }
    }
    let readEnd = ends[0]
    let registration = try loop.register(readEnd, interest: .readable) { _ in
      var byte: UInt8 = 0
      _ = read(readEnd, &byte, 1)
      note("handler")
      loop.schedule(after: .milliseconds(1)) {
        note("timer")
        loop.stop()
      }
    }
    loop.execute { note("closure") }
    var one: UInt8 = 1
    #expect(write(ends[1], &one, 1) == 1)
    loop.runOnCallingThread()
    loop.deregister(registration)
    #expect(ran.withLock { $0 } == ["handler", "closure", "timer"])
    #expect(onCaller.withLock { $0 }, "everything ran on the calling thread")
    #expect(!loop.isInLoop, "the loop ended")
  }

  @Test func aReadableDescriptorCallsItsHandlerOnTheLoopUntilDeregistered() async throws {
    let loop = try EventLoop(name: "test-readable")
    defer { loop.stop() }
    var ends: [Int32] = [-1, -1]
    #expect(pipe(&ends) == 0)
    defer { for end in ends { close(end) } }
    let readEnd = ends[0]
    let reads = Lock<[UInt8]>([])
    let onLoop = Lock(true)
    let registration = try loop.register(readEnd, interest: .readable) { readiness in
      onLoop.withLock { $0 = $0 && loop.isInLoop }
      var byte: UInt8 = 0
      if readiness.isReadable, read(readEnd, &byte, 1) == 1 { reads.withLock { $0.append(byte) } }
    }
    for byte: UInt8 in [1, 2, 3] {
      var value = byte
      #expect(write(ends[1], &value, 1) == 1)
    }
    #expect(await waitUntil { reads.withLock { $0 } == [1, 2, 3] })
    #expect(onLoop.withLock { $0 }, "handlers run on the loop's thread")
    await loop.submit { loop.deregister(registration) }
    var four: UInt8 = 4
    #expect(write(ends[1], &four, 1) == 1)
    await loop.submit {}  // a full round of the loop after the write
    #expect(reads.withLock { $0 } == [1, 2, 3], "no handler after deregistering")
  }

  /// Closures submitted from many threads at once all run, once each: none is lost between the
  /// loop's last look and its sleep.
  @Test func closuresFromManyThreadsAllRunOnce() async throws {
    let loop = try EventLoop(name: "test-wakeups")
    defer { loop.stop() }
    let count = Lock(0)
    let threads = 8
    let perThread = 2_000
    let done = Lock(0)
    for _ in 0..<threads {
      try SystemThread.detach(name: "test-submitter") {
        for _ in 0..<perThread { loop.execute { count.withLock { $0 += 1 } } }
        done.withLock { $0 += 1 }
      }
    }
    #expect(await waitUntil { done.withLock { $0 } == threads })
    #expect(await waitUntil { count.withLock { $0 } == threads * perThread })
    try await Task.sleep(for: .milliseconds(20))
    #expect(count.withLock { $0 } == threads * perThread, "each ran once")
  }

  @Test func timersRunInDeadlineOrderAndCancelledOnesDoNot() async throws {
    let loop = try EventLoop(name: "test-timers")
    defer { loop.stop() }
    let fired = Lock<[Int]>([])
    let start = ContinuousClock.now
    loop.schedule(at: start + .milliseconds(30)) { fired.withLock { $0.append(3) } }
    loop.schedule(at: start + .milliseconds(10)) { fired.withLock { $0.append(1) } }
    let cancelled = loop.schedule(at: start + .milliseconds(20)) {
      fired.withLock { $0.append(2) }
    }
    loop.cancel(cancelled)
    loop.schedule(at: start + .milliseconds(40)) { fired.withLock { $0.append(4) } }
    #expect(await waitUntil { fired.withLock { $0.count } == 3 })
    #expect(fired.withLock { $0 } == [1, 3, 4])
  }

  /// A timer scheduled from another thread while the loop sleeps without a timeout wakes it.
  @Test func aTimerScheduledWhileTheLoopSleepsRuns() async throws {
    let loop = try EventLoop(name: "test-sleeping")
    defer { loop.stop() }
    await loop.submit {}
    try await Task.sleep(for: .milliseconds(20))  // the loop is in epoll_wait(-1) now
    let fired = Lock(false)
    loop.schedule(after: .milliseconds(5)) { fired.withLock { $0 = true } }
    #expect(await waitUntil { fired.withLock { $0 } })
  }

  @Test func stopRunsSubmittedClosuresThenEndsTheThread() async throws {
    // Finished threads park in this process, as in the daemon (the quiet executor's tests turn
    // parking on for the whole process too): the loop's thread must end all the same. It
    // parked under the loop's name, and this test failed when nothing else took it (CI's
    // ThreadSanitizer step, after 60 s).
    SystemThread.parkFinishedThreads()
    let name = "test-stop-\(getpid() % 1000)"
    let loop = try EventLoop(name: name)
    let thread = await loop.submit { Self.currentThread() }
    #expect(Self.isAlive(thread, named: name))
    let ran = Lock(false)
    loop.execute { ran.withLock { $0 = true } }
    loop.stop()
    #expect(await waitUntil { !Self.isAlive(thread, named: name) })
    #expect(ran.withLock { $0 })
  }

  @Test func afterTheLoopEndedClosuresAndTimersAreDroppedAtOnce() async throws {
    final class Captured: Sendable {}
    let name = "test-drop-\(getpid() % 1000)"
    let loop = try EventLoop(name: name)
    // Its thread runs (and is named) before it is stopped.
    let thread = await loop.submit { Self.currentThread() }
    loop.stop()
    #expect(await waitUntil { !Self.isAlive(thread, named: name) })
    let ran = Lock(false)
    weak var closureCapture: Captured?
    weak var timerCapture: Captured?
    do {
      let forClosure = Captured()
      let forTimer = Captured()
      closureCapture = forClosure
      timerCapture = forTimer
      // Holding what they capture (a caller that holds the loop) would be a cycle nothing ends.
      loop.execute {
        _ = forClosure
        ran.withLock { $0 = true }
      }
      loop.schedule(after: .zero) {
        _ = forTimer
        ran.withLock { $0 = true }
      }
    }
    #expect(closureCapture == nil, "a closure handed to an ended loop is released")
    #expect(timerCapture == nil, "a timer handed to an ended loop is released")
    #expect(!ran.withLock { $0 })
  }

  @Test func aSubmitAfterTheLoopEndedRunsOnItsCallerInsteadOfWaitingForever() async throws {
    let name = "test-late-\(getpid() % 1000)"
    let loop = try EventLoop(name: name)
    let thread = await loop.submit { Self.currentThread() }
    loop.stop()
    #expect(await waitUntil { !Self.isAlive(thread, named: name) })
    // A service given a loop that stopped first still takes its last step (its `stop()`).
    let answer = Lock<Int?>(nil)
    Task {
      answer.withLock { $0 = nil }
      let value = await loop.submit { 42 }
      answer.withLock { $0 = value }
    }
    #expect(await waitUntil { answer.withLock { $0 } == 42 })
  }

  @Test func submitsRacingTheLoopsEndAllReturn() async throws {
    final class Shared: Sendable {
      let answered = Lock(0)
      let started = Lock(false)
    }
    // Eight tasks submit while the loop stops: each submit is answered, by the loop or, once
    // it ended, on its caller; none is dropped in between.
    for round in 0..<50 {
      let loop = try EventLoop(name: "test-race-\(round)")
      let shared = Shared()
      for _ in 0..<8 {
        Task.detached {
          while !shared.started.withLock({ $0 }) { await Task.yield() }
          for _ in 0..<20 {
            await loop.submit {}
            shared.answered.withLock { $0 += 1 }
          }
        }
      }
      shared.started.withLock { $0 = true }
      loop.stop()
      let allAnswered = await waitUntil { shared.answered.withLock { $0 } == 160 }
      #expect(allAnswered, "round \(round): submits left waiting")
      if !allAnswered { break }
    }
  }

  @Test func stoppingAnEndedLoopWritesToNoDescriptor() async throws {
    let name = "test-twice-\(getpid() % 1000)"
    let loop = try EventLoop(name: name)
    let thread = await loop.submit { Self.currentThread() }
    loop.stop()
    #expect(await waitUntil { !Self.isAlive(thread, named: name) })
    // The numbers the loop closed are the lowest free ones now: these take them.
    let reused = (0..<4).map { _ in eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    defer { for descriptor in reused { close(descriptor) } }
    loop.stop()
    loop.execute {}
    loop.schedule(after: .zero) {}
    for descriptor in reused {
      var value: eventfd_t = 0
      #expect(eventfd_read(descriptor, &value) == -1, "descriptor \(descriptor) was written")
    }
  }

  /// The kernel's id of the calling thread: `/proc/thread-self` links to `<pid>/task/<tid>`.
  private static func currentThread() -> Int {
    let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
    return link.flatMap { $0.split(separator: "/").last.flatMap { Int($0) } } ?? -1
  }

  /// Whether the thread `id` of this process still runs under the loop's `name`. A thread is
  /// followed by its id, not found by its name: a thread started *from* the loop's thread (the
  /// concurrency pool's, when the loop resumes a waiting task) inherits the name and may
  /// outlive the loop by minutes on a busy machine.
  private static func isAlive(_ id: Int, named name: String) -> Bool {
    let comm = try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)
    return comm?.trimmingCharacters(in: .newlines) == name
  }
}
