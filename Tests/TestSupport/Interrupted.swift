import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `call`, a system call returning -1 with `errno` on failure, again while it fails with
/// `EINTR`; returns its result (`errno` still set when it is -1).
///
/// A signal handled on a thread blocked in `recv` on a socket with `SO_RCVTIMEO` ends the call
/// with `EINTR`, `SA_RESTART` or not (signal(7)). The test process's threads block most signals,
/// not all (glibc's own `SIGSETXID`, the crash handlers' signals, whatever a test unblocked on
/// a thread that then started others), and a helper that took any -1 as "no answer" failed once
/// in a full run with "errno 4" (`DaemonControlSocketTests`; which signal it was is not known).
public func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
  while true {
    let result = call()
    if result == -1 && errno == EINTR { continue }
    return result
  }
}

/// The calling thread's id (`/proc/thread-self` links to `PID/task/TID`).
public func currentThreadID() -> pid_t? {
  let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
  return link?.split(separator: "/").last.flatMap { pid_t($0) }
}

/// Whether this process's thread `thread` is blocked in `recvfrom` right now (`recv` is
/// `recvfrom` in the kernel).
public func isInRecvfrom(thread: pid_t) -> Bool {
  #if arch(x86_64)
    let recvfrom = "45"
  #elseif arch(arm64)
    let recvfrom = "207"
  #endif
  let call = try? String(contentsOfFile: "/proc/self/task/\(thread)/syscall", encoding: .utf8)
  // The first field is the number of the system call the thread is blocked in.
  return call?.split(separator: " ").first.map(String.init) == recvfrom
}
