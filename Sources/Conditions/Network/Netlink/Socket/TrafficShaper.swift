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
/// One shaper holds one unsubscribed `NETLINK_ROUTE` socket, opened in the network namespace
/// the shaper was made in (``NetworkNamespace/perform(inNamespaceAt:_:)`` for another one), and
/// the classes it added on each link, so that a capped run costs a request per change and no
/// dump: adding the root qdisc is asked with `NLM_F_EXCL` (the kernel refuses to replace
/// anything but its default qdisc) and only a refusal is looked into; a link's last class goes
/// with its qdisc. Not thread-safe: its owner serializes the calls. Needs `CAP_NET_ADMIN` in
/// its namespace.
public final class TrafficShaper {
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

  /// Whether `classID` is one of the daemon's classes (``classID(slot:)``). Only those are
  /// sent: libnl asserts, aborting the process, when a class's major is not its qdisc's.
  public static func isDaemonClass(_ classID: UInt32) -> Bool {
    classID >> 16 == major && (firstMinor..<firstMinor + slotCount).contains(classID & 0xffff)
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

  /// The connected socket; nil after a failed call (a failure may leave replies unread, so the
  /// next call starts on a new socket).
  private var socket: OpaquePointer?
  /// The classes this shaper added on each link (by ifindex) and has not removed: a link is in
  /// it exactly while the shaper's root qdisc is there for its classes.
  private var added: [Int32: Set<UInt32>] = [:]

  /// A shaper in the calling thread's network namespace (its socket is opened here).
  public init() throws {
    socket = try Self.connect()
  }

  deinit {
    if let socket { nl_socket_free(socket) }
  }

  /// Adds (or changes) class `classID` with rate and ceiling `bitsPerSecond` on link
  /// `interface`, adding the root HTB qdisc first when the link has no class of this shaper;
  /// returns the link's index (what ``removeClass(ifindex:classID:)`` takes). When it throws,
  /// what it added is removed.
  @discardableResult
  public func addClass(interface: String, classID: UInt32, bitsPerSecond: UInt64) throws -> Int32 {
    guard Self.isDaemonClass(classID) else { throw ShaperError.foreignClass(Self.format(classID)) }
    var found: Int32?
    do {
      return try withSocket { socket in
        let index = try ifindex(of: interface, socket)
        found = index
        if added[index] == nil {
          try ensureRoot(ifindex: index, interface: interface, socket)
        }
        added[index, default: []].insert(classID)
        var status = try add(classID, bitsPerSecond, ifindex: index, socket)
        if status == -NLE_OBJ_NOTFOUND {
          // The qdisc went from under the shaper (`tc qdisc del`), its classes with it.
          added[index] = [classID]
          try ensureRoot(ifindex: index, interface: interface, socket)
          status = try add(classID, bitsPerSecond, ifindex: index, socket)
        }
        try check(status, "rtnl_class_add \(Self.format(classID)) dev \(interface)")
        return index
      }
    } catch {
      if let found { try? removeClass(ifindex: found, classID: classID) }
      throw error
    }
  }

  /// Removes class `classID` from link `ifindex` (nothing when it is gone); the link's last class
  /// of this shaper goes with the root qdisc. A link that is gone has nothing left to remove.
  public func removeClass(ifindex index: Int32, classID: UInt32) throws {
    guard Self.isDaemonClass(classID) else { throw ShaperError.foreignClass(Self.format(classID)) }
    try withSocket { socket in
      let interface = "#\(index)"
      if added[index]?.remove(classID) != nil, added[index]?.isEmpty == true {
        added[index] = nil
        return try deleteRoot(ifindex: index, interface: interface, socket)
      }
      let status = try withClass(classID, ifindex: index) { rtnl_class_delete(socket, $0) }
      if status < 0, -status != NLE_OBJ_NOTFOUND, -status != NLE_NODEV {
        try check(status, "rtnl_class_delete \(Self.format(classID)) dev \(interface)")
      }
    }
  }

  /// The daemon's classes on link `interface` (none when it has no `6267:` HTB qdisc).
  public func classes(interface: String) throws -> [ShapedClass] {
    try withSocket { socket in try classes(ifindex: try ifindex(of: interface, socket), socket) }
  }

  /// Deletes the daemon's root qdisc (with all its classes) from every link that has one — what
  /// a daemon killed while runs were capped left behind; returns the links' names.
  @discardableResult
  public func removeAll() throws -> [String] {
    try withSocket { socket in
      var removed: [String] = []
      for (index, kind) in try rootQdiscs(socket) where kind.handle == Self.rootHandle {
        let name = interfaceName(index, socket) ?? "#\(index)"
        try deleteRoot(ifindex: index, interface: name, socket)
        added[index] = nil
        removed.append(name)
      }
      return removed
    }
  }

  // MARK: - libnl

  /// A connected socket reading a reply whole in one `recvmsg` (no peek for its size first).
  private static func connect() throws -> OpaquePointer {
    guard let socket = nl_socket_alloc() else {
      throw SystemCallError("nl_socket_alloc", errno: .noMemory)
    }
    let status = nl_connect(socket, NETLINK_ROUTE)
    if status < 0 {
      nl_socket_free(socket)
      try check(status, "nl_connect NETLINK_ROUTE")
    }
    // The replies here (acks, a link, qdisc and class dumps) fit in 32 KiB with room to spare;
    // a bigger one would fail the call with NLE_MSG_TRUNC, not be cut silently.
    nl_socket_disable_msg_peek(socket)
    _ = nl_socket_set_msg_buf_size(socket, 32 * 1024)
    return socket
  }

  /// Runs `body` on the socket, opened anew when the last call failed.
  private func withSocket<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
    let socket = try self.socket ?? Self.connect()
    self.socket = socket
    do {
      return try body(socket)
    } catch {
      nl_socket_free(socket)
      self.socket = nil
      throw error
    }
  }

  /// Asks for class `classID`; the status libnl returns.
  private func add(
    _ classID: UInt32, _ bitsPerSecond: UInt64, ifindex index: Int32, _ socket: OpaquePointer
  ) throws -> Int32 {
    try withClass(classID, ifindex: index) { shaped in
      try check(rtnl_tc_set_kind(shaped, "htb"), "rtnl_tc_set_kind htb")
      let bytes = max(bitsPerSecond / 8, 1)
      try check(rtnl_htb_set_rate64(shaped, bytes), "rtnl_htb_set_rate64")
      try check(rtnl_htb_set_ceil64(shaped, bytes), "rtnl_htb_set_ceil64")
      return rtnl_class_add(socket, shaped, NLM_F_CREATE | NLM_F_REPLACE)
    }
  }

  /// Runs `body` with class `classID` of the daemon's qdisc on link `index` (an object to send).
  private func withClass<T>(
    _ classID: UInt32, ifindex index: Int32, _ body: (OpaquePointer) throws -> T
  ) throws -> T {
    guard let shaped = rtnl_class_alloc() else {
      throw SystemCallError("rtnl_class_alloc", errno: .noMemory)
    }
    defer { rtnl_class_put(shaped) }
    rtnl_tc_set_ifindex(shaped, index)
    rtnl_tc_set_parent(shaped, Self.rootHandle)
    rtnl_tc_set_handle(shaped, classID)
    return try body(shaped)
  }

  /// Runs `body` with the daemon's root qdisc on link `index` (an object to send).
  private func withRootQdisc<T>(ifindex index: Int32, _ body: (OpaquePointer) throws -> T)
    throws -> T
  {
    guard let qdisc = rtnl_qdisc_alloc() else {
      throw SystemCallError("rtnl_qdisc_alloc", errno: .noMemory)
    }
    defer { rtnl_qdisc_put(qdisc) }
    rtnl_tc_set_ifindex(qdisc, index)
    rtnl_tc_set_parent(qdisc, TC_H_ROOT)
    rtnl_tc_set_handle(qdisc, Self.rootHandle)
    return try body(qdisc)
  }

  private func ifindex(of interface: String, _ socket: OpaquePointer) throws -> Int32 {
    var link: OpaquePointer?
    try check(
      rtnl_link_get_kernel(socket, 0, interface, &link), "rtnl_link_get_kernel \(interface)")
    guard let link else {
      throw LibnlError(operation: "rtnl_link_get_kernel \(interface)", message: "no such link")
    }
    defer { rtnl_link_put(link) }
    return rtnl_link_get_ifindex(link)
  }

  /// The name of link `index` in the socket's namespace.
  private func interfaceName(_ index: Int32, _ socket: OpaquePointer) -> String? {
    var link: OpaquePointer?
    guard rtnl_link_get_kernel(socket, index, nil, &link) >= 0, let link else { return nil }
    defer { rtnl_link_put(link) }
    return rtnl_link_get_name(link).map { String(cString: $0) }
  }

  /// The root qdisc of every link: ifindex → (handle, kind).
  private func rootQdiscs(_ socket: OpaquePointer) throws -> [(
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
  /// root qdisc someone configured. The addition is asked with `NLM_F_EXCL`, which the kernel
  /// grants only over its own default qdisc (handle `0:`); a refusal (`EEXIST`) means a root
  /// qdisc someone chose — this daemon's from before, or a foreign one — and only then are the
  /// links' qdiscs read to tell which.
  private func ensureRoot(
    ifindex index: Int32, interface: String, _ socket: OpaquePointer
  ) throws {
    let status = try withRootQdisc(ifindex: index) { qdisc in
      try check(rtnl_tc_set_kind(qdisc, "htb"), "rtnl_tc_set_kind htb")
      return rtnl_qdisc_add(socket, qdisc, NLM_F_CREATE | NLM_F_EXCL)
    }
    guard status == -NLE_EXIST else {
      return try check(
        status, "rtnl_qdisc_add htb \(Self.format(Self.rootHandle)) dev \(interface)")
    }
    let root = try rootQdiscs(socket).first { $0.0 == index }?.1
    if let root, root.handle == Self.rootHandle, root.kind == "htb" { return }
    if let root, root.handle != 0 {
      throw ShaperError.foreignQdisc(
        interface: interface, kind: root.kind, handle: Self.format(root.handle))
    }
    try check(status, "rtnl_qdisc_add htb \(Self.format(Self.rootHandle)) dev \(interface)")
  }

  private func deleteRoot(
    ifindex index: Int32, interface: String, _ socket: OpaquePointer
  ) throws {
    let status = try withRootQdisc(ifindex: index) { rtnl_qdisc_delete(socket, $0) }
    // Gone with its link (NODEV), or already (the kernel's own qdisc is back: NOTFOUND).
    if status < 0, -status != NLE_OBJ_NOTFOUND, -status != NLE_NODEV {
      try check(status, "rtnl_qdisc_delete \(Self.format(Self.rootHandle)) dev \(interface)")
    }
  }

  private func classes(ifindex index: Int32, _ socket: OpaquePointer) throws -> [ShapedClass] {
    var cache: OpaquePointer?
    try check(rtnl_class_alloc_cache(socket, index, &cache), "rtnl_class_alloc_cache")
    guard let cache else { return [] }
    defer { nl_cache_free(cache) }
    var found: [ShapedClass] = []
    var object = nl_cache_get_first(cache)
    while let current = object {
      let handle = rtnl_tc_get_handle(current)
      if handle >> 16 == Self.major, handle & 0xffff >= Self.firstMinor,
        handle & 0xffff < Self.firstMinor + Self.slotCount
      {
        var rate: UInt64 = 0
        if rtnl_htb_get_rate64(current, &rate) < 0 { rate = UInt64(rtnl_htb_get_rate(current)) }
        found.append(ShapedClass(classID: handle, bytesPerSecond: rate))
      }
      object = nl_cache_get_next(current)
    }
    return found.sorted { $0.classID < $1.classID }
  }

}

/// Throws libnl's error for a negative `status`.
private func check(_ status: Int32, _ operation: String) throws {
  if status < 0 {
    throw LibnlError(operation: operation, message: String(cString: nl_geterror(status)))
  }
}

/// Why a link cannot be shaped.
public enum ShaperError: Error, Equatable, CustomStringConvertible {
  /// The link's root qdisc was configured by someone else: the daemon does not replace it.
  case foreignQdisc(interface: String, kind: String, handle: String)
  /// The class asked for is not one of ``TrafficShaper/classID(slot:)``'s (as `tc` prints it).
  case foreignClass(String)

  public var description: String {
    switch self {
    case .foreignQdisc(let interface, let kind, let handle):
      "\(interface) has its own root qdisc (\(kind) \(handle)); the daemon does not replace it"
    case .foreignClass(let classID):
      "class \(classID) is not one of the daemon's "
        + "(\(TrafficShaper.format(TrafficShaper.classID(slot: 0))) to "
        + "\(TrafficShaper.format(TrafficShaper.classID(slot: TrafficShaper.slotCount - 1)))):"
        + " nothing was sent"
    }
  }
}
