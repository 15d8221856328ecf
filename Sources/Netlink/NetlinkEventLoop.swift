import CNetlink
import Glibc

/// Waits for a ``RouteNetlinkSocket`` on a dedicated thread blocked in `poll()` with no
/// timeout (no wakeups while nothing changes) and hands every reception to a handler on that
/// thread. ``stop()`` wakes the thread through an eventfd.
public final class NetlinkEventLoop: Sendable {
  /// What the handler wants after a reception.
  public enum Next: Sendable, Equatable {
    /// Read on: more is expected (e.g. the reply to a request just sent, which the kernel
    /// queued before `send` returned).
    case read
    /// The batch is complete: wait in `poll()` without a last empty read (anything still
    /// queued makes `poll()` return at once).
    case wait
  }

  private let socket: RouteNetlinkSocket
  private let wakeDescriptor: Int32

  /// Creates a loop over `socket`; call ``start(handler:onExit:)`` once.
  public init(socket: RouteNetlinkSocket) throws {
    let descriptor = cnl_eventfd_nonblocking()
    guard descriptor >= 0 else { throw NetlinkSystemError(operation: "eventfd", errno: errno) }
    self.socket = socket
    wakeDescriptor = descriptor
  }

  deinit { Glibc.close(wakeDescriptor) }

  /// Starts the thread. `handler` runs on it for each reception (an error it throws ends the
  /// loop) and says whether to read on or wait (``Next``); `.wouldBlock` comes when everything
  /// readable was read before the handler said ``Next/wait`` (the moment to send requests and
  /// publish; answer ``Next/read`` to it only right after sending a request, whose reply is
  /// then already queued, or the loop spins). Before the first wait the handler gets `nil` (a chance to send the first
  /// requests). `onExit` runs last, with the error that ended the loop, or `nil` after
  /// ``stop()``.
  public func start(
    handler: @escaping @Sendable (RouteNetlinkSocket.Reception?) throws -> Next,
    onExit: @escaping @Sendable ((any Error)?) -> Void
  ) throws {
    try DedicatedThread.detach { [self] in
      _ = cnl_set_thread_name("bg-netlink")
      do {
        _ = try handler(nil)
        try loop(handler)
        onExit(nil)
      } catch {
        onExit(error)
      }
    }
  }

  /// Wakes the thread and ends the loop. Safe to call from any thread, more than once.
  public func stop() {
    var one: UInt64 = 1
    _ = Glibc.write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
  }

  private func loop(_ handler: (RouteNetlinkSocket.Reception?) throws -> Next) throws {
    var descriptors = [
      pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
      if ready < 0 {
        if errno == EINTR { continue }
        throw NetlinkSystemError(operation: "poll", errno: errno)
      }
      if descriptors[1].revents != 0 { return }
      // POLLERR on a netlink socket means ENOBUFS: receive() reports it as .overrun.
      drain: while true {
        let reception = try socket.receive()
        if try handler(reception) == .wait { break drain }
      }
    }
  }
}
