import Foundation
import Locking
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The premise of the tests' `retryingInterrupts` and the helper itself, with a real signal: a
/// handled signal (`SA_RESTART` and all) ends a `recv` blocked on a socket with `SO_RCVTIMEO`
/// with `EINTR`; the helper goes on reading.
@Suite(.blockingIO, .serialized)
struct InterruptedReceiveTests {
  @Test(
    "a handled signal ends a timed recv with EINTR despite SA_RESTART; retryingInterrupts reads on"
  )
  func aSignalDuringATimedReceive() async throws {
    var handler = sigaction()
    handler.__sigaction_handler.sa_handler = { _ in }
    handler.sa_flags = SA_RESTART
    #expect(sigaction(SIGURG, &handler, nil) == 0)

    let plain = try await receiveWhileSignalled(retrying: false)
    #expect(plain.result == -1 && plain.error == EINTR, "\(plain)")
    let retried = try await receiveWhileSignalled(retrying: true)
    #expect(retried.result == 1 && retried.signals > 0, "\(retried)")
  }

  struct Outcome: CustomStringConvertible, Sendable {
    var result: Int
    var error: Int32
    var signals: Int
    var description: String { "recv: \(result), errno \(error), after \(signals) signal(s)" }
  }

  /// A thread blocks in `recv` on one end of a socket pair (10 s `SO_RCVTIMEO`); once the kernel
  /// shows it in `recvfrom`, it gets `SIGURG` 5 times, 10 ms apart (fewer when the call ended
  /// first); then, when `retrying`, the other end writes a byte. (Without `retrying` nothing is
  /// written: a byte there and a signal the thread had not woken for yet could end the call
  /// with the byte.) The thread lives until its outcome is read, so every `pthread_kill` names
  /// a live thread.
  private func receiveWhileSignalled(retrying: Bool) async throws -> Outcome {
    var ends: [Int32] = [-1, -1]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
    defer { for end in ends { close(end) } }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    try #require(
      setsockopt(ends[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        == 0)
    let reader = ends[0]
    let state = ReaderState()
    Thread {
      // The test process's threads block most signals (a mask inherited from the runner).
      var urgent = sigset_t()
      sigemptyset(&urgent)
      sigaddset(&urgent, SIGURG)
      pthread_sigmask(SIG_UNBLOCK, &urgent, nil)
      state.started.withLock { $0 = (pthread_self(), currentThreadID() ?? -1) }
      var byte: UInt8 = 0
      let call = { recv(reader, &byte, 1, 0) }
      let result = retrying ? retryingInterrupts(call) : call()
      let error = errno
      state.ended.withLock { $0 = Outcome(result: result, error: error, signals: 0) }
      state.release.wait()
    }.start()
    defer { state.release.signal() }
    let (thread, tid) = try await eventually { state.started.withLock { $0 } }
    _ = try await eventually {
      isInRecvfrom(thread: tid) ? true : nil
    }
    var signals = 0
    while signals < 5, state.ended.withLock({ $0 }) == nil {
      #expect(pthread_kill(thread, SIGURG) == 0)
      signals += 1
      try await Task.sleep(for: .milliseconds(10))
    }
    if retrying {
      var byte: UInt8 = 1
      #expect(write(ends[1], &byte, 1) == 1)
    }
    var outcome = try await eventually(seconds: 20) { state.ended.withLock { $0 } }
    outcome.signals = signals
    return outcome
  }

  /// The reading thread's id once it runs, its call's outcome once it ended, and what lets it
  /// end.
  private final class ReaderState: Sendable {
    let started = Lock<(pthread_t, pid_t)?>(nil)
    let ended = Lock<Outcome?>(nil)
    let release = DispatchSemaphore(value: 0)
  }

  /// `body`'s first non-nil answer, asked every millisecond for up to `seconds`.
  private func eventually<T: Sendable>(seconds: Int = 10, _ body: @Sendable () -> T?)
    async throws -> T
  {
    for _ in 0..<(seconds * 1000) {
      if let value = body() { return value }
      try await Task.sleep(for: .milliseconds(1))
    }
    throw CancellationError()
  }
}
