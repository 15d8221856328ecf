import CNetlink
import Glibc
import Locking
import SystemCalls
import SystemPackage

/// A libnl `NETLINK_ROUTE` socket subscribed to link, IPv4/IPv6 address, route and rule
/// notifications, and nexthop notifications where the kernel has them (5.3+), filtered in the
/// kernel by ``NotificationFilter`` (nothing that cannot change the answer wakes the reader).
/// A receive returns at once unless it is asked to wait (``receive(waiting:)``); pair the socket
/// with ``NetlinkEventLoop``, which waits in that receive. One receive buffer is reused for every
/// datagram.
public final class RouteNetlinkSocket: Sendable {
  /// What one receive produced.
  public enum Reception: Sendable, Equatable {
    /// A datagram from the kernel. `truncated` when it was longer than the receive buffer.
    case datagram([UInt8], truncated: Bool)
    /// A datagram whose socket-address port id is not 0 (not the kernel): dropped.
    case foreignSender(port: UInt32)
    /// `ENOBUFS`: the receive buffer overflowed and notifications were lost.
    case overrun
    /// Nothing to read right now (a receive that was not asked to wait).
    case wouldBlock
  }

  private let socket: Lock<OpaquePointer?>
  /// Allocated, not zero-filled: only the pages datagrams were written to become resident.
  private let receiveBuffer = Lock(
    UnsafeMutableRawBufferPointer.allocate(byteCount: datagramCapacity, alignment: 16))
  /// The socket's file descriptor, for `poll()` by a reader that waits on other descriptors too.
  public let fileDescriptor: Int32

  private static let groups: [rtnetlink_groups] = [
    RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE,
    RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
  ]
  /// Joined when the kernel knows it (nexthop objects exist since Linux 5.3).
  private static let optionalGroups: [rtnetlink_groups] = [RTNLGRP_NEXTHOP]
  private static let receiveBufferBytes: Int32 = 4 << 20
  private static let datagramCapacity = 256 * 1024

  /// Opens and subscribes a socket in the current network namespace, or in the namespace at
  /// `networkNamespacePath` (the socket stays bound to it). Notifications of routes to specific
  /// prefixes reach it only when the prefix covers one of `probeDestinations` (4- or 16-byte
  /// addresses; see ``NotificationFilter``). Without `notifications`, a socket for dumps and
  /// lookups only (one look, as a one-shot `status` takes): it joins no group, so it needs no
  /// filter and no large receive buffer (the kernel sends a dump as it is read). Their setup was
  /// 7 % of a one-shot `status`'s CPU, most of it the kernel compiling the filter (issue #35).
  public static func open(
    networkNamespacePath: String? = nil, probeDestinations: [[UInt8]] = [],
    notifications: Bool = true
  ) throws -> RouteNetlinkSocket {
    guard let path = networkNamespacePath else {
      return try RouteNetlinkSocket(
        probeDestinations: probeDestinations, notifications: notifications)
    }
    return try NetworkNamespace.perform(inNamespaceAt: path) {
      try RouteNetlinkSocket(probeDestinations: probeDestinations, notifications: notifications)
    }
  }

  private init(probeDestinations: [[UInt8]], notifications: Bool) throws {
    guard let handle = nl_socket_alloc() else {
      throw SystemCallError("nl_socket_alloc", errno: .noMemory)
    }
    do {
      nl_socket_disable_seq_check(handle)
      nl_socket_disable_auto_ack(handle)
      try Self.check(nl_connect(handle, NETLINK_ROUTE), "nl_connect NETLINK_ROUTE")
      let descriptor = nl_socket_get_fd(handle)
      if notifications {
        try NotificationFilter.attach(to: descriptor, covering: probeDestinations)
        for group in Self.groups {
          try Self.check(
            nl_socket_add_membership(handle, Int32(group.rawValue)),
            "nl_socket_add_membership \(group.rawValue)")
        }
        for group in Self.optionalGroups {
          _ = nl_socket_add_membership(handle, Int32(group.rawValue))
        }
        Self.enlargeReceiveBuffer(descriptor)
      }
      fileDescriptor = descriptor
    } catch {
      nl_socket_free(handle)
      throw error
    }
    socket = Lock(handle)
  }

  /// Asks for a large receive buffer: SO_RCVBUFFORCE (needs CAP_NET_ADMIN), else SO_RCVBUF
  /// (capped by net.core.rmem_max). Overruns are still detected and answered by a re-dump.
  private static func enlargeReceiveBuffer(_ descriptor: Int32) {
    var size = receiveBufferBytes
    let length = socklen_t(MemoryLayout<Int32>.size)
    if setsockopt(descriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
      _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, length)
    }
  }

  /// The socket's netlink port id (its `nl_pid`), as other sockets address it.
  public var portID: UInt32 {
    socket.withLock { handle in handle.map { nl_socket_get_local_port($0) } ?? 0 }
  }

  /// Sends one complete netlink message to the kernel.
  public func send(_ message: [UInt8]) throws {
    try socket.withLock { handle in
      guard let handle else { throw SystemCallError("send", errno: .badFileDescriptor) }
      // nl_sendto only reads the buffer; its parameter is not const.
      let sent = message.withUnsafeBytes {
        nl_sendto(handle, UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count)
      }
      try Self.check(sent, "nl_sendto")
    }
  }

  /// Asks the kernel for an acknowledgement (`NLMSG_NOOP` with `NLM_F_ACK`): its arrival ends a
  /// receive waiting on another thread. Unprivileged processes cannot send to a socket
  /// themselves, but every process may ask the kernel.
  public func wakeReceiver() throws {
    let header = NetlinkHeader(
      length: UInt32(NetlinkHeader.size), type: NetlinkConstant.messageNoop,
      flags: NetlinkConstant.flagRequest | NetlinkConstant.flagAck, sequence: 0, portID: 0)
    try send(header.encoded)
  }

  /// Receives one datagram, checking that the kernel sent it: at once (``Reception/wouldBlock``
  /// when nothing is queued), or, when `waiting`, once one arrives. The datagram is read into a
  /// reused buffer; only its bytes are copied out.
  public func receive(waiting: Bool = false) throws -> Reception {
    let flags = Int32(MSG_TRUNC) | (waiting ? 0 : Int32(MSG_DONTWAIT))
    return try receiveBuffer.withLock { buffer throws(SystemCallError) in
      try Self.receive(fileDescriptor, into: buffer, flags: flags)
    }
  }

  private static func receive(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: Int32
  ) throws(SystemCallError) -> Reception {
    var sender: UInt32 = 0
    let received: Int?
    do {
      received = try nonBlockingSystemCall("recvfrom netlink") {
        receiveDatagram(descriptor, into: buffer, flags: flags, sender: &sender)
      }
    } catch  where error.errno == .noBufferSpace {
      return .overrun
    }
    guard let count = received else { return .wouldBlock }
    if sender != 0 { return .foreignSender(port: sender) }
    return .datagram(
      Array(UnsafeRawBufferPointer(rebasing: buffer[0..<min(count, buffer.count)])),
      truncated: count > buffer.count)
  }

  /// One `recvfrom`: its result (-1 with errno), and the sender's port id in `sender`.
  private static func receiveDatagram(
    _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: Int32,
    sender: inout UInt32
  ) -> Int {
    var address = sockaddr_nl()
    var addressLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
    let count = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        recvfrom(descriptor, buffer.baseAddress, buffer.count, flags, $0, &addressLength)
      }
    }
    sender = address.nl_pid
    return count
  }

  /// Closes the socket. Idempotent.
  public func close() {
    socket.withLock { handle in
      if let current = handle { nl_socket_free(current) }
      handle = nil
    }
  }

  deinit {
    close()
    receiveBuffer.withLock { $0.deallocate() }
  }

  private static func check(_ status: Int32, _ operation: String) throws {
    if status < 0 {
      throw LibnlError(operation: operation, message: String(cString: nl_geterror(status)))
    }
  }
}
