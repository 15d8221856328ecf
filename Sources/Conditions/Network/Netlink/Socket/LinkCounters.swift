import CNetlink
import Glibc
import Locking
import SystemCalls
import SystemPackage

/// A link's byte counters (`IFLA_STATS64` of `RTM_NEWLINK`, what `ip -s link` prints), read
/// on demand: one `RTM_GETLINK` request for one interface over an unsubscribed libnl socket
/// (a short-lived one, or ``Reader``'s, kept). Nothing is read unless asked (an idle daemon
/// makes no system calls).
public struct LinkCounters: Hashable, Sendable {
  /// Bytes received on the link since it was created.
  public var receivedBytes: UInt64
  /// Bytes sent on the link since it was created.
  public var sentBytes: UInt64

  /// Creates counters.
  public init(receivedBytes: UInt64, sentBytes: UInt64) {
    self.receivedBytes = receivedBytes
    self.sentBytes = sentBytes
  }

  /// Reads the counters of the interface named `interface` in the current network namespace.
  public static func read(interface: String) throws -> LinkCounters {
    let socket = try connect()
    defer { nl_socket_free(socket) }
    return try read(interface: interface, on: socket)
  }

  /// Reads counters over one socket, kept between reads (a daemon reads at each run's start
  /// and end: the socket's creation, bind and options were 8 of the 10 system calls of a
  /// read, issue #35). The socket belongs to the network namespace of the thread that made
  /// it, at the first read; it is closed after a failed read and made again at the next. An
  /// unsubscribed socket receives nothing it did not ask for: idle, it costs no system call.
  public final class Reader: Sendable {
    /// The libnl socket (its pointer), nil until the first read or after a failure.
    private let socket = Lock<UInt?>(nil)

    public init() {}

    deinit {
      socket.withLock { socket in
        if let socket, let pointer = OpaquePointer(bitPattern: socket) {
          nl_socket_free(pointer)
        }
      }
    }

    /// The counters of the interface named `interface`; reads are serialized.
    public func read(interface: String) throws -> LinkCounters {
      try socket.withLock { held in
        let socket: OpaquePointer
        if let held, let pointer = OpaquePointer(bitPattern: held) {
          socket = pointer
        } else {
          socket = try LinkCounters.connect()
          held = UInt(bitPattern: socket)
        }
        do {
          return try LinkCounters.read(interface: interface, on: socket)
        } catch {
          nl_socket_free(socket)
          held = nil
          throw error
        }
      }
    }
  }

  /// A libnl socket connected to `NETLINK_ROUTE`, which receives each message with one
  /// `recvmsg` into a 32 KiB buffer: libnl's default peeks first (`MSG_PEEK`) to size its
  /// buffer, two calls per message — four of a read's system calls (issue #35). A link's
  /// `RTM_NEWLINK` is about 1.5 KiB; one larger than the buffer would fail the read as
  /// truncated, never give a wrong count.
  private static func connect() throws -> OpaquePointer {
    guard let socket = nl_socket_alloc() else {
      throw SystemCallError("nl_socket_alloc", errno: .noMemory)
    }
    do {
      try check(nl_connect(socket, NETLINK_ROUTE), "nl_connect NETLINK_ROUTE")
      nl_socket_disable_msg_peek(socket)
      try check(Int32(nl_socket_set_msg_buf_size(socket, 32_768)), "nl_socket_set_msg_buf_size")
    } catch {
      nl_socket_free(socket)
      throw error
    }
    return socket
  }

  private static func read(interface: String, on socket: OpaquePointer) throws -> LinkCounters {
    var link: OpaquePointer?
    try check(
      rtnl_link_get_kernel(socket, 0, interface, &link), "rtnl_link_get_kernel \(interface)")
    guard let link else {
      throw LibnlError(operation: "rtnl_link_get_kernel \(interface)", message: "no such link")
    }
    defer { rtnl_link_put(link) }
    return LinkCounters(
      receivedBytes: rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES),
      sentBytes: rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES))
  }

  private static func check(_ status: Int32, _ operation: String) throws {
    if status < 0 {
      throw LibnlError(operation: operation, message: String(cString: nl_geterror(status)))
    }
  }
}
