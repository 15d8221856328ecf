import CNetlink
import Glibc
import SystemCalls

/// Egress caps on a link with an HTB qdisc, through libnl-route (what `tc qdisc/class` does):
/// the root qdisc `6267:` ("bg") of kind `htb` with one class `6267:<minor>` per capped run
/// (minors ``firstMinor`` ..< ``firstMinor`` + ``slotCount``: the handle range that marks them
/// as the daemon's). HTB puts a packet whose `skb->priority` names one of its leaf classes in
/// that class; every other packet goes to HTB's direct queue, unshaped (no default class).
///
/// Only a root qdisc the kernel chose (handle `0:`: `noqueue`, `fq_codel`, `mq`, …) is replaced;
/// a link whose root qdisc someone configured is left alone (``ShaperError/foreignQdisc``).
/// The HTB qdisc is deleted with its last class, giving the link its default qdisc back.
///
/// Every call opens a short-lived unsubscribed `NETLINK_ROUTE` socket in the caller's network
/// namespace (``NetworkNamespace/perform(inNamespaceAt:_:)`` for another one) and needs
/// `CAP_NET_ADMIN` there.
public enum TrafficShaper {
  /// The major number of the daemon's root qdisc (`6267:`).
  public static let major: UInt32 = 0x6267
  /// The root qdisc's handle.
  public static let rootHandle: UInt32 = major << 16
  /// The first class minor used for runs.
  public static let firstMinor: UInt32 = 0x1000
  /// How many runs can be capped at once on one link.
  public static let slotCount: UInt32 = 0x1000

  /// The class id of slot `slot` (0 ..< ``slotCount``): `6267:1000` + slot. Also the value of
  /// `skb->priority` that puts a packet in it.
  public static func classID(slot: UInt32) -> UInt32 {
    precondition(slot < slotCount, "slot out of range")
    return rootHandle | (firstMinor + slot)
  }

  /// `classID` as `tc` prints it (`6267:1000`).
  public static func format(_ classID: UInt32) -> String {
    String(classID >> 16, radix: 16) + ":" + String(classID & 0xffff, radix: 16)
  }

  /// One class of the daemon's qdisc on a link.
  public struct ShapedClass: Hashable, Sendable {
    public var classID: UInt32
    /// The class's rate (and ceiling) in bytes per second.
    public var bytesPerSecond: UInt64

    public init(classID: UInt32, bytesPerSecond: UInt64) {
      self.classID = classID
      self.bytesPerSecond = bytesPerSecond
    }
  }

  /// Adds (or changes) class `classID` with rate and ceiling `bitsPerSecond` on link
  /// `interface`, adding the root HTB qdisc first when the link has the kernel's default one.
  public static func addClass(
    interface: String, classID: UInt32, bitsPerSecond: UInt64
  ) throws {
    try withSocket { socket in
      let index = try ifindex(of: interface, socket)
      try ensureRoot(ifindex: index, interface: interface, socket)
      guard let shaped = rtnl_class_alloc() else {
        throw SystemCallError("rtnl_class_alloc", errno: .noMemory)
      }
      defer { rtnl_class_put(shaped) }
      rtnl_tc_set_ifindex(shaped, index)
      rtnl_tc_set_parent(shaped, rootHandle)
      rtnl_tc_set_handle(shaped, classID)
      try check(rtnl_tc_set_kind(shaped, "htb"), "rtnl_tc_set_kind htb")
      let bytes = max(bitsPerSecond / 8, 1)
      try check(rtnl_htb_set_rate64(shaped, bytes), "rtnl_htb_set_rate64")
      try check(rtnl_htb_set_ceil64(shaped, bytes), "rtnl_htb_set_ceil64")
      try check(
        rtnl_class_add(socket, shaped, NLM_F_CREATE | NLM_F_REPLACE),
        "rtnl_class_add \(format(classID)) dev \(interface)")
    }
  }

  /// Removes class `classID` from link `interface` (nothing when it is gone), and the root
  /// qdisc with it when it was the daemon's last class there. A link that is gone has nothing
  /// left to remove.
  public static func removeClass(interface: String, classID: UInt32) throws {
    try withSocket { socket in
      guard let index = try? ifindex(of: interface, socket) else { return }
      guard let shaped = rtnl_class_alloc() else {
        throw SystemCallError("rtnl_class_alloc", errno: .noMemory)
      }
      defer { rtnl_class_put(shaped) }
      rtnl_tc_set_ifindex(shaped, index)
      rtnl_tc_set_parent(shaped, rootHandle)
      rtnl_tc_set_handle(shaped, classID)
      let status = rtnl_class_delete(socket, shaped)
      if status < 0, -status != NLE_OBJ_NOTFOUND {
        try check(status, "rtnl_class_delete \(format(classID)) dev \(interface)")
      }
      let root = try rootQdiscs(socket).first { $0.0 == index }?.1
      if root?.handle == rootHandle, try classes(ifindex: index, socket).isEmpty {
        try deleteRoot(ifindex: index, interface: interface, socket)
      }
    }
  }

  /// The daemon's classes on link `interface` (none when it has no `6267:` HTB qdisc).
  public static func classes(interface: String) throws -> [ShapedClass] {
    try withSocket { socket in try classes(ifindex: try ifindex(of: interface, socket), socket) }
  }

  /// Deletes the daemon's root qdisc (with all its classes) from every link that has one — what
  /// a daemon killed while runs were capped left behind; returns the links' names.
  @discardableResult
  public static func removeAll() throws -> [String] {
    try withSocket { socket in
      var removed: [String] = []
      for (index, kind) in try rootQdiscs(socket) where kind.handle == rootHandle {
        let name = interfaceName(index) ?? "#\(index)"
        try deleteRoot(ifindex: index, interface: name, socket)
        removed.append(name)
      }
      return removed
    }
  }

  // MARK: - libnl

  private static func withSocket<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
    guard let socket = nl_socket_alloc() else {
      throw SystemCallError("nl_socket_alloc", errno: .noMemory)
    }
    defer { nl_socket_free(socket) }
    try check(nl_connect(socket, NETLINK_ROUTE), "nl_connect NETLINK_ROUTE")
    return try body(socket)
  }

  private static func ifindex(of interface: String, _ socket: OpaquePointer) throws -> Int32 {
    var link: OpaquePointer?
    try check(
      rtnl_link_get_kernel(socket, 0, interface, &link), "rtnl_link_get_kernel \(interface)")
    guard let link else {
      throw LibnlError(operation: "rtnl_link_get_kernel \(interface)", message: "no such link")
    }
    defer { rtnl_link_put(link) }
    return rtnl_link_get_ifindex(link)
  }

  private static func interfaceName(_ index: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
    guard if_indextoname(UInt32(index), &buffer) != nil else { return nil }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The root qdisc of every link: ifindex → (handle, kind).
  private static func rootQdiscs(_ socket: OpaquePointer) throws -> [(
    Int32, (handle: UInt32, kind: String)
  )] {
    var cache: OpaquePointer?
    try check(rtnl_qdisc_alloc_cache(socket, &cache), "rtnl_qdisc_alloc_cache")
    guard let cache else { return [] }
    defer { nl_cache_free(cache) }
    var roots: [(Int32, (handle: UInt32, kind: String))] = []
    var object = nl_cache_get_first(cache)
    while let current = object {
      if rtnl_tc_get_parent(current) == TC_H_ROOT {
        let kind = rtnl_tc_get_kind(current).map { String(cString: $0) } ?? ""
        roots.append((rtnl_tc_get_ifindex(current), (rtnl_tc_get_handle(current), kind)))
      }
      object = nl_cache_get_next(current)
    }
    return roots
  }

  /// Adds the HTB root qdisc to link `index` unless it is there; throws when the link has a
  /// root qdisc someone configured.
  private static func ensureRoot(
    ifindex index: Int32, interface: String, _ socket: OpaquePointer
  ) throws {
    let root = try rootQdiscs(socket).first { $0.0 == index }?.1
    if let root, root.handle == rootHandle, root.kind == "htb" { return }
    if let root, root.handle != 0 {
      throw ShaperError.foreignQdisc(
        interface: interface, kind: root.kind, handle: format(root.handle))
    }
    guard let qdisc = rtnl_qdisc_alloc() else {
      throw SystemCallError("rtnl_qdisc_alloc", errno: .noMemory)
    }
    defer { rtnl_qdisc_put(qdisc) }
    rtnl_tc_set_ifindex(qdisc, index)
    rtnl_tc_set_parent(qdisc, TC_H_ROOT)
    rtnl_tc_set_handle(qdisc, rootHandle)
    try check(rtnl_tc_set_kind(qdisc, "htb"), "rtnl_tc_set_kind htb")
    try check(
      rtnl_qdisc_add(socket, qdisc, NLM_F_CREATE | NLM_F_REPLACE),
      "rtnl_qdisc_add htb \(format(rootHandle)) dev \(interface)")
  }

  private static func deleteRoot(
    ifindex index: Int32, interface: String, _ socket: OpaquePointer
  ) throws {
    guard let qdisc = rtnl_qdisc_alloc() else {
      throw SystemCallError("rtnl_qdisc_alloc", errno: .noMemory)
    }
    defer { rtnl_qdisc_put(qdisc) }
    rtnl_tc_set_ifindex(qdisc, index)
    rtnl_tc_set_parent(qdisc, TC_H_ROOT)
    rtnl_tc_set_handle(qdisc, rootHandle)
    let status = rtnl_qdisc_delete(socket, qdisc)
    if status < 0, -status != NLE_OBJ_NOTFOUND {
      try check(status, "rtnl_qdisc_delete \(format(rootHandle)) dev \(interface)")
    }
  }

  private static func classes(ifindex index: Int32, _ socket: OpaquePointer) throws
    -> [ShapedClass]
  {
    var cache: OpaquePointer?
    try check(rtnl_class_alloc_cache(socket, index, &cache), "rtnl_class_alloc_cache")
    guard let cache else { return [] }
    defer { nl_cache_free(cache) }
    var found: [ShapedClass] = []
    var object = nl_cache_get_first(cache)
    while let current = object {
      let handle = rtnl_tc_get_handle(current)
      if handle >> 16 == major, handle & 0xffff >= firstMinor,
        handle & 0xffff < firstMinor + slotCount
      {
        var rate: UInt64 = 0
        if rtnl_htb_get_rate64(current, &rate) < 0 { rate = UInt64(rtnl_htb_get_rate(current)) }
        found.append(ShapedClass(classID: handle, bytesPerSecond: rate))
      }
      object = nl_cache_get_next(current)
    }
    return found.sorted { $0.classID < $1.classID }
  }

  private static func check(_ status: Int32, _ operation: String) throws {
    if status < 0 {
      throw LibnlError(operation: operation, message: String(cString: nl_geterror(status)))
    }
  }
}

/// Why a link cannot be shaped.
public enum ShaperError: Error, Equatable, CustomStringConvertible {
  /// The link's root qdisc was configured by someone else: the daemon does not replace it.
  case foreignQdisc(interface: String, kind: String, handle: String)

  public var description: String {
    switch self {
    case .foreignQdisc(let interface, let kind, let handle):
      "\(interface) has its own root qdisc (\(kind) \(handle)); the daemon does not replace it"
    }
  }
}
