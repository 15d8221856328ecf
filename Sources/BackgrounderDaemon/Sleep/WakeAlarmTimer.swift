import CSystemShims
import Foundation
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// A `CLOCK_REALTIME_ALARM` timerfd: armed for a wall-clock time, its expiry wakes a suspended
/// machine. Creating it needs `CAP_WAKE_ALARM` (`EPERM` without it).
final class WakeAlarmTimer: Sendable {
  /// The timer's descriptor (non-blocking, close-on-exec).
  let descriptor: Int32

  /// Creates the timer, disarmed.
  init() throws(SystemCallError) {
    descriptor = try systemCall("timerfd_create(CLOCK_REALTIME_ALARM)") {
      timerfd_create(CLOCK_REALTIME_ALARM, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
    }
  }

  deinit {
    close(descriptor)
  }

  /// Arms the timer for `date` (absolute, wall clock).
  func arm(at date: Date) throws(SystemCallError) {
    var specification = itimerspec()
    let seconds = date.timeIntervalSince1970.rounded(.down)
    specification.it_value.tv_sec = time_t(seconds)
    specification.it_value.tv_nsec = Int((date.timeIntervalSince1970 - seconds) * 1e9)
    // 0 would disarm: a time at the epoch (never one of a job) is one nanosecond after it.
    if specification.it_value.tv_sec == 0 && specification.it_value.tv_nsec == 0 {
      specification.it_value.tv_nsec = 1
    }
    _ = try systemCall("timerfd_settime") {
      timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &specification, nil)
    }
  }

  /// Reads (and so acknowledges) an expiry, without blocking.
  func acknowledge() {
    var expirations: UInt64 = 0
    _ = try? nonBlockingSystemCall("read(timerfd)") {
      read(descriptor, &expirations, MemoryLayout<UInt64>.size)
    }
  }
}
