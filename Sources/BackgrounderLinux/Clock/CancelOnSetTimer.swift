import CTimerFD
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A `CLOCK_REALTIME` timerfd armed for the far future with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`: it never expires, but a read fails with
/// `ECANCELED` whenever the wall clock is set (`clock_settime`, `date -s`, an NTP step) and after
/// a resume from suspend (the kernel's `timerfd_resume` treats the jump of `CLOCK_REALTIME`
/// against `CLOCK_MONOTONIC` as a clock set). This is how systemd notices clock changes.
package final class CancelOnSetTimer: Sendable {
  /// What one read of the timer found.
  package enum Reading: Equatable {
    /// The clock was set (or the machine resumed): re-evaluate due times, then re-arm.
    case clockChanged
    /// Nothing to read (spurious wake-up or interrupted read).
    case nothing
    /// The far-future expiry was reached: re-arm.
    case expired
  }

  /// The timer's file descriptor (non-blocking, close-on-exec).
  package let descriptor: Int32

  /// Creates and arms the timer.
  package init() throws(ClockChangeError) {
    let fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
    guard fd >= 0 else { throw ClockChangeError(operation: "timerfd_create", errno: errno) }
    descriptor = fd
    do {
      try arm()
    } catch {
      close(fd)
      throw error
    }
  }

  deinit {
    close(descriptor)
  }

  /// (Re-)arms the timer; needed after every `clockChanged`.
  package func arm() throws(ClockChangeError) {
    var specification = itimerspec()
    specification.it_value.tv_sec = time_t.max
    let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
    guard timerfd_settime(descriptor, flags, &specification, nil) == 0 else {
      throw ClockChangeError(operation: "timerfd_settime", errno: errno)
    }
  }

  /// Whether the timer is armed (has a pending expiry).
  package var isArmed: Bool {
    var current = itimerspec()
    guard timerfd_gettime(descriptor, &current) == 0 else { return false }
    return current.it_value.tv_sec != 0 || current.it_value.tv_nsec != 0
  }

  /// Reads the timer without blocking.
  package func read() throws(ClockChangeError) -> Reading {
    var expirations: UInt64 = 0
    let count = Glibc.read(descriptor, &expirations, MemoryLayout<UInt64>.size)
    return try Self.interpret(count: count, errno: count < 0 ? errno : 0)
  }

  /// What a `read` of `count` bytes (or `-1` with `errno`) means.
  package static func interpret(count: Int, errno: Int32) throws(ClockChangeError) -> Reading {
    if count == MemoryLayout<UInt64>.size { return .expired }
    if count >= 0 { return .nothing }
    switch errno {
    case ECANCELED: return .clockChanged
    case EAGAIN, EINTR: return .nothing
    default: throw ClockChangeError(operation: "read(timerfd)", errno: errno)
    }
  }
}

/// A failure of the wall-clock change monitor.
public struct ClockChangeError: Error, CustomStringConvertible, Equatable {
  /// The system call that failed.
  public var operation: String
  /// Its errno.
  public var errno: Errno

  init(operation: String, errno: Int32) {
    self.operation = operation
    self.errno = Errno(rawValue: errno)
  }

  public var description: String { "\(operation): \(errno)" }
}
