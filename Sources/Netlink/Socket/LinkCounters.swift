import CNetlink
import Glibc
import SystemCalls
import SystemPackage

/// A link's byte counters (`IFLA_STATS64` of `RTM_NEWLINK`, what `ip -s link` prints), read
/// on demand: one `RTM_GETLINK` request for one interface over a short-lived, unsubscribed
/// libnl socket. Nothing is read unless asked (an idle daemon makes no system calls).
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
    guard let socket = nl_socket_alloc() else {
      throw SystemCallError("nl_socket_alloc", errno: .noMemory)
    }
    defer { nl_socket_free(socket) }
    try check(nl_connect(socket, NETLINK_ROUTE), "nl_connect NETLINK_ROUTE")
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
