import CGenericNetlink
import Glibc
import SystemCalls
import SystemPackage

/// A generic-netlink socket joined to nl80211's `mlme` multicast group (connect, disconnect,
/// roam events), non-blocking, for a poll loop. libnl-genl resolves the family and the group;
/// messages are read and written as raw bytes and parsed by ``Nl80211Parser``.
public final class Nl80211Socket: @unchecked Sendable {
  // @unchecked: the libnl handle is used only by the one thread that polls this socket.
  private let handle: OpaquePointer
  /// The nl80211 generic-netlink family id (the message type of nl80211 messages).
  public let family: UInt16
  private var sequence: UInt32 = 1

  /// Why the socket could not be opened (libnl gives no `errno`; a failed send or receive on
  /// the open socket is a `SystemCallError`).
  public struct OpenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, e.g. "nl80211 family not found (no wireless support in this kernel)".
    public var description: String
  }

  /// Opens the socket, or throws when generic netlink or the nl80211 family is not available
  /// (kernels without wireless support, containers).
  public init() throws(OpenError) {
    guard let handle = nl_socket_alloc() else {
      throw OpenError(description: "nl_socket_alloc failed")
    }
    nl_socket_disable_seq_check(handle)
    if genl_connect(handle) < 0 {
      nl_socket_free(handle)
      throw OpenError(description: "cannot open a generic netlink socket")
    }
    let family = genl_ctrl_resolve(handle, NL80211_GENL_NAME)
    guard family >= 0 else {
      nl_socket_free(handle)
      throw OpenError(description: "nl80211 family not found (no wireless support in this kernel)")
    }
    let group = genl_ctrl_resolve_grp(handle, NL80211_GENL_NAME, NL80211_MULTICAST_GROUP_MLME)
    guard group >= 0, nl_socket_add_membership(handle, group) == 0,
      nl_socket_set_nonblocking(handle) == 0
    else {
      nl_socket_free(handle)
      throw OpenError(description: "cannot join the nl80211 mlme multicast group")
    }
    self.handle = handle
    self.family = UInt16(family)
  }

  deinit { nl_socket_free(handle) }

  /// The descriptor to poll for `POLLIN`.
  public var fileDescriptor: Int32 { nl_socket_get_fd(handle) }

  /// Sends `GET_INTERFACE` for one interface (a single reply, no dump).
  public func requestInterface(index: UInt32) throws(SystemCallError) {
    _ = try send(Nl80211Request.getInterface(family: family, sequence: sequence, index: index))
  }

  /// Sends the request of `dump`; returns its sequence number (that of its `NLMSG_DONE`).
  public func request(_ dump: Nl80211DumpQueue.Dump) throws(SystemCallError) -> UInt32 {
    switch dump {
    case .interfaces:
      try send(Nl80211Request.getInterface(family: family, sequence: sequence, index: nil))
    case .scan(let index):
      try send(Nl80211Request.getScan(family: family, sequence: sequence, index: index))
    }
  }

  private func send(_ request: [UInt8]) throws(SystemCallError) -> UInt32 {
    let used = sequence
    sequence &+= 1
    // A datagram: sent whole or not at all.
    _ = try systemCall("send of nl80211 command \(request[16])") {
      request.withUnsafeBytes { Glibc.send(fileDescriptor, $0.baseAddress, $0.count, 0) }
    }
    return used
  }

  /// The next datagram, `nil` when nothing is waiting. Datagrams not from the kernel are
  /// dropped.
  public func receive() throws(SystemCallError) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 32_768)
    while true {
      var source = sockaddr_nl()
      let received: Int?
      do throws(SystemCallError) {
        received = try nonBlockingSystemCall("nl80211 recvfrom") {
          var sourceLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
          return buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &source) {
              $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(fileDescriptor, bytes.baseAddress, bytes.count, 0, $0, &sourceLength)
              }
            }
          }
        }
      } catch  where error.errno == .noBufferSpace {
        return []  // events lost: the caller re-dumps
      }
      guard let count = received else { return nil }
      if source.nl_pid != 0 { continue }
      return Array(buffer[0..<count])
    }
  }
}

/// Builds nl80211 requests as bytes.
public enum Nl80211Request {
  /// `NL80211_CMD_GET_INTERFACE` (dump when `index` is nil).
  public static func getInterface(family: UInt16, sequence: UInt32, index: UInt32?) -> [UInt8] {
    message(command: 5, family: family, sequence: sequence, dump: index == nil, index: index)
  }

  /// `NL80211_CMD_GET_SCAN`, a dump of the BSSes interface `index` has seen (the one it is
  /// associated with marked by `NL80211_BSS_STATUS`), as `iw dev IFNAME link` asks.
  public static func getScan(family: UInt16, sequence: UInt32, index: UInt32) -> [UInt8] {
    message(command: 32, family: family, sequence: sequence, dump: true, index: index)
  }

  private static func message(
    command: UInt8, family: UInt16, sequence: UInt32, dump: Bool, index: UInt32?
  ) -> [UInt8] {
    var attributes: [UInt8] = []
    if let index {
      attributes += le16(8) + le16(Nl80211Parser.attributeInterfaceIndex) + le32(index)
    }
    let flags: UInt16 = dump ? 0x301 : 0x1  // NLM_F_REQUEST (| NLM_F_DUMP)
    let body: [UInt8] = [command, 0, 0, 0] + attributes  // cmd, version, reserved
    return le32(UInt32(16 + body.count)) + le16(family) + le16(flags) + le32(sequence) + le32(0)
      + body
  }

  private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
  private static func le32(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) }
  }
}
