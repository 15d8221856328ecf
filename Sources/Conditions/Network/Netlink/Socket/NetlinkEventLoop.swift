import CNetlink
import Synchronization
import SystemCalls

/// Waits for a ``RouteNetlinkSocket`` on a dedicated thread blocked in a receive with no
/// timeout (no wakeups while nothing changes; one system call per notification, not a `poll()`
/// and a receive) and hands every reception to a handler on that thread. ``stop()`` asks the
/// kernel for an acknowledgement on the socket, whose arrival ends the waiting receive.
public final class NetlinkEventLoop: Sendable {
  /// What the handler wants after a reception.
  public enum Next: Sendable, Equatable {
    /// Read on: more is expected (e.g. the reply to a request just sent, which the kernel
    /// queued before `send` returned).
    case read
    /// The batch is complete: wait in a receive without a last empty read (anything still
    /// queued is received at once).
    case wait
  }

  private let socket: RouteNetlinkSocket
  private let stopping = Atomic(false)

  /// Creates a loop over `socket`; call ``start(handler:onExit:)`` once.
  public init(socket: RouteNetlinkSocket) {
    self.socket = socket
  }

  /// Starts the thread. `handler` runs on it for each reception (an error it throws ends the
  /// loop) and says whether to read on or wait (``Next``); `.wouldBlock` comes when everything
  /// readable was read before the handler said ``Next/wait`` (the moment to send requests and
  /// publish; answer ``Next/read`` to it only right after sending a request, whose reply is
  /// then already queued, or the loop spins). Before the first wait the handler gets `nil` (a
  /// chance to send the first requests). `onExit` runs last, with the error that ended the
  /// loop, or `nil` after ``stop()``.
  public func start(
    handler: @escaping @Sendable (RouteNetlinkSocket.Reception?) throws -> Next,
    onExit: @escaping @Sendable ((any Error)?) -> Void
  ) throws {
    try SystemThread.detach(name: "bg-netlink") { [self] in
      do {
        try loop(handler)
        onExit(nil)
      } catch {
        onExit(error)
      }
    }
  }

  /// Ends the loop: the thread returns before it handles another reception. Safe to call from
  /// any thread, more than once. The acknowledgement that wakes the thread is never handed to
  /// the handler. The socket must still be open: close it once the loop has ended (in
  /// `onExit`).
  public func stop() {
    stopping.store(true, ordering: .sequentiallyConsistent)
    try? socket.wakeReceiver()
  }

  private func loop(_ handler: (RouteNetlinkSocket.Reception?) throws -> Next) throws {
    var waiting = try handler(nil) == .wait
    while true {
      // ENOBUFS (lost notifications) ends a waiting receive too: it comes as .overrun.
      let reception = try socket.receive(waiting: waiting)
      if stopping.load(ordering: .sequentiallyConsistent) { return }
      waiting = try handler(reception) == .wait
    }
  }
}
