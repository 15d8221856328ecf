import Glibc

/// `struct sockaddr_nl` from `<linux/netlink.h>`, which Glibc's Swift module does not import:
/// `sa_family_t nl_family; unsigned short nl_pad; __u32 nl_pid; __u32 nl_groups;` (12 bytes).
struct NetlinkAddress: Equatable {
  /// `NETLINK_KOBJECT_UEVENT` from `<linux/netlink.h>`.
  static let kobjectUeventProtocol: Int32 = 15
  static let size = 12

  /// The socket's port ID (`nl_pid`): 0 for the kernel.
  var portID: UInt32 = 0
  /// The multicast group bit mask (`nl_groups`).
  var groups: UInt32 = 0

  /// Calls `body` with a `sockaddr` pointer to this address, for `bind`/`sendto`.
  func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    withUnsafeTemporaryAllocation(
      byteCount: Self.size, alignment: MemoryLayout<UInt32>.alignment
    ) { raw in
      raw.initializeMemory(as: UInt8.self, repeating: 0)
      raw.storeBytes(of: sa_family_t(AF_NETLINK), toByteOffset: 0, as: sa_family_t.self)
      raw.storeBytes(of: portID, toByteOffset: 4, as: UInt32.self)
      raw.storeBytes(of: groups, toByteOffset: 8, as: UInt32.self)
      return body(
        UnsafePointer(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)), socklen_t(Self.size)
      )
    }
  }

  /// Fills an address through `body` (for `getsockname`/`recvfrom`) and decodes it.
  /// Returns `body`'s result and the address (`nil` if it is not an `AF_NETLINK` address).
  static func receive<R>(
    _ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> R
  ) -> (R, NetlinkAddress?) {
    withUnsafeTemporaryAllocation(
      byteCount: 16, alignment: MemoryLayout<UInt32>.alignment
    ) { raw in
      raw.initializeMemory(as: UInt8.self, repeating: 0)
      var length = socklen_t(raw.count)
      let result = body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
      guard length >= socklen_t(size),
        raw.load(fromByteOffset: 0, as: sa_family_t.self) == sa_family_t(AF_NETLINK)
      else { return (result, nil) }
      let address = NetlinkAddress(
        portID: raw.load(fromByteOffset: 4, as: UInt32.self),
        groups: raw.load(fromByteOffset: 8, as: UInt32.self))
      return (result, address)
    }
  }
}
