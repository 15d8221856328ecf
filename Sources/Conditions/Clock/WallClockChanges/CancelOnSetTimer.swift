import CSystemShims
import SystemCalls
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
  package init() throws(SystemCallError) {
    let fd = try systemCall("timerfd_create") {
      timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
    }
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
  package func arm() throws(SystemCallError) {
    var specification = itimerspec()
    specification.it_value.tv_sec = time_t.max
    let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
    _ = try systemCall("timerfd_settime") {
      timerfd_settime(descriptor, flags, &specification, nil)
    }
  }

  /// Whether the timer is armed (has a pending expiry).
  package var isArmed: Bool {
    var current = itimerspec()
    guard timerfd_gettime(descriptor, &current) == 0 else { return false }
    return current.it_value.tv_sec != 0 || current.it_value.tv_nsec != 0
  }

  /// Reads the timer without blocking.
  package func read() throws(SystemCallError) -> Reading {
    var expirations: UInt64 = 0
    do {
      let count = try nonBlockingSystemCall("read(timerfd)") {
        Glibc.read(descriptor, &expirations, MemoryLayout<UInt64>.size)
      }
      return Self.interpret(count: count)
    } catch {
      if error.errno == .canceled { return .clockChanged }
      throw error
    }
  }

  /// What a `read` of `count` bytes (nil: it would block) means.
  package static func interpret(count: Int?) -> Reading {
    count == MemoryLayout<UInt64>.size ? .expired : .nothing
  }
}
