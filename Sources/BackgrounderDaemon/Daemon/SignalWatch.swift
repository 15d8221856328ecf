import CSystemShims
import EventLoops
import Glibc
import SystemCalls
import UnixSignals

/// The daemon's signals (SIGTERM, SIGINT, SIGHUP) read on the daemon's event loop, instead of
/// libdispatch signal sources (whose manager thread then stays for the life of the process).
/// The `run` entry point calls ``forwardDaemonSignals()`` first: a handler writes each signal's
/// number to a pipe whose read end the loop watches (the self-pipe trick; a `signalfd` would
/// need the signals blocked in every thread, including threads of libraries that unblock
/// them). A run's process resets every handler to its default before it execs
/// (``RunProcess``). A daemon started in a process that did not (a test) keeps the
/// Dispatch signal sources (``isForwarded``).
final class SignalWatch: Sendable {
  /// The signals the daemon handles.
  static let signals: [UnixSignal] = [.sigterm, .sigint, .sighup]

  private let eventLoop: EventLoop
  private let registration: EventLoop.Registration

  /// Installs the handlers that forward ``signals`` to the pipe, for the life of the process.
  /// Call it once, before the daemon starts.
  static func forwardDaemonSignals() throws(SystemCallError) {
    let numbers = signals.map(\.rawValue)
    _ = try systemCall("sigaction") {
      csystem_forward_signals_to_pipe(numbers, Int32(numbers.count))
    }
  }

  /// Whether ``forwardDaemonSignals()`` ran in this process.
  static var isForwarded: Bool { csystem_signal_pipe() >= 0 }

  /// Reads the forwarded signals on `eventLoop`'s thread and calls `handler` with each one
  /// (those received before, too). Requires ``isForwarded``.
  init(eventLoop: EventLoop, handler: @escaping @Sendable (UnixSignal) -> Void)
    throws(SystemCallError)
  {
    let descriptor = csystem_signal_pipe()
    let signals = Self.signals
    registration = try eventLoop.register(descriptor, interest: .readable) { _ in
      var bytes = [UInt8](repeating: 0, count: 16)
      while let count = try? nonBlockingSystemCall(
        "read(signal pipe)", { read(descriptor, &bytes, 16) }),
        count > 0
      {
        for byte in bytes.prefix(count) {
          if let signal = signals.first(where: { $0.rawValue == Int32(byte) }) { handler(signal) }
        }
      }
    }
    self.eventLoop = eventLoop
  }

  /// Stops reading (the handlers stay: later signals wait in the pipe).
  func stop() {
    eventLoop.execute { [eventLoop, registration] in eventLoop.deregister(registration) }
  }
}
