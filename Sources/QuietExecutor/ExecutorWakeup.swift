import Glibc
import SystemCalls

/// A wakeup over a pipe: each ``signal()`` writes one byte; the one reader waits in `poll` for
/// the read end (``pollDescriptor``) and then ``consume(upTo:)``s what was written. A thread
/// waiting so makes no system calls until then.
final class ExecutorWakeup: Sendable {
  private let readDescriptor: Int32
  private let writeDescriptor: Int32

  /// Opens the pipe (both ends close-on-exec).
  init() {
    var descriptors: [Int32] = [-1, -1]
    guard pipe(&descriptors) == 0 else {
      fatalError("executor: \(SystemCallError.current("pipe"))")
    }
    for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    readDescriptor = descriptors[0]
    writeDescriptor = descriptors[1]
  }

  /// The read end, for `poll`.
  var pollDescriptor: Int32 { readDescriptor }

  /// Makes the reader's `poll` return (now, or the next time it waits).
  func signal() {
    var byte: UInt8 = 1
    _ = try? systemCall("write(wakeup)") { write(writeDescriptor, &byte, 1) }
  }

  /// Consumes up to `count` pending signals; for a reader woken by `poll`.
  func consume(upTo count: Int) {
    var bytes = [UInt8](repeating: 0, count: count)
    _ = try? systemCall("read(wakeup)") { read(readDescriptor, &bytes, count) }
  }
}
