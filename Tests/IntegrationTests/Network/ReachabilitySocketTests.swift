import Foundation
import Glibc
import Locking
import Netlink
import TestSupport
import Testing

/// The route socket in a namespace of its own: kernel datagrams are accepted, datagrams from
/// another process's socket are reported as foreign and never parsed, and the kernel filters
/// out notifications that cannot change the answer.
@Suite(.blockingIO, .enabled(if: getuid() == 0, "needs root to create network namespaces"))
struct ReachabilitySocketTests {
  @Test func datagramFromAnotherSocketIsDroppedAsForeign() throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let socket = try RouteNetlinkSocket.open(networkNamespacePath: sandbox.path)
    defer { socket.close() }
    let target = socket.portID
    let forged = try NetworkNamespace.perform(inNamespaceAt: sandbox.path) { () -> UInt32 in
      let sender = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue), 0)
      defer { close(sender) }
      // struct sockaddr_nl { nl_family = AF_NETLINK, pad, nl_pid = target, nl_groups = 0 }
      var address = [UInt8](repeating: 0, count: 12)
      address[0] = UInt8(AF_NETLINK)
      withUnsafeBytes(of: target.littleEndian) { address.replaceSubrange(4..<8, with: $0) }
      let message = DumpRequest.message(for: .link, sequence: 1)
      let sent = address.withUnsafeBytes { raw in
        sendto(
          sender, message, message.count, 0,
          raw.baseAddress!.assumingMemoryBound(to: sockaddr.self),
          socklen_t(raw.count))
      }
      return sent == message.count ? 1 : 0
    }
    #expect(forged == 1)
    let reception = try receiveWaiting(on: socket)
    guard case .foreignSender(let port) = reception else {
      Issue.record("expected a foreign sender, got \(reception)")
      return
    }
    #expect(port != 0)
  }

  @Test func kernelReplyToADumpIsAccepted() throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let socket = try RouteNetlinkSocket.open(networkNamespacePath: sandbox.path)
    defer { socket.close() }
    try socket.send(DumpRequest.message(for: .link, sequence: 5))
    let reception = try receiveWaiting(on: socket)
    guard case .datagram(let bytes, truncated: false) = reception else {
      Issue.record("expected a datagram, got \(reception)")
      return
    }
    let names = NetlinkFraming.frames(in: bytes).compactMap { frame -> String? in
      guard let bytes = try? frame.get(), let message = try? RtnetlinkParser.parse(bytes),
        case .link(let link, .new) = message.payload
      else { return nil }
      return link.name
    }
    #expect(names.contains("lo"))
  }

  /// The kernel drops, before they reach the socket, a route to a specific prefix and an IPv6
  /// address of link scope (and the local route the kernel adds for it); the default route
  /// added after them is the first and only route or address the socket receives.
  @Test func notificationsThatCannotChangeTheAnswerNeverArrive() throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    try sandbox.ip("link", "set", "veth0", "up")
    try sandbox.ip("address", "add", "192.0.2.1/24", "dev", "veth0")
    let socket = try RouteNetlinkSocket.open(networkNamespacePath: sandbox.path)
    defer { socket.close() }
    try sandbox.ip("route", "add", "10.1.0.0/16", "via", "192.0.2.254")
    try sandbox.ip("-6", "address", "add", "fe80::1234/64", "dev", "veth0", "nodad")
    try sandbox.ip("route", "add", "default", "via", "192.0.2.254")
    var received: [RtnetlinkMessage.Payload] = []
    while case .datagram(let bytes, _) = try receiveWaiting(on: socket, milliseconds: 200) {
      for frame in NetlinkFraming.frames(in: bytes) {
        let payload = try RtnetlinkParser.parse(try frame.get()).payload
        switch payload {
        case .route, .nonDefaultRoute, .address: received.append(payload)
        default: break
        }
      }
    }
    guard case .route(let route, .new) = received.first, received.count == 1 else {
      Issue.record("expected only the default route, got \(received)")
      return
    }
    #expect(route.isDefault)
  }

  /// A loop whose thread waits in its receive (seen in `/proc`: the thread is inside
  /// `recvfrom`, not `poll`) ends on ``NetlinkEventLoop/stop()``: the kernel's acknowledgement
  /// wakes it, and the handler never sees that acknowledgement.
  @Test func stopEndsALoopWaitingInItsReceive() async throws {
    let sandbox = try NamespaceSandbox.create()
    defer { sandbox.remove() }
    let socket = try RouteNetlinkSocket.open(networkNamespacePath: sandbox.path)
    let loop = NetlinkEventLoop(socket: socket)
    let receptions = Lock<[RouteNetlinkSocket.Reception?]>([])
    let loopThread = Lock<pid_t?>(nil)
    let exit = Lock<(ended: Bool, error: String?)>((false, nil))
    try loop.start(
      handler: { reception in
        loopThread.withLock { $0 = $0 ?? currentThreadID() }
        receptions.withLock { $0.append(reception) }
        return .wait
      },
      onExit: { error in
        socket.close()
        exit.withLock { $0 = (true, error.map { "\($0)" }) }
      })
    let waits = await waitUntil {
      loopThread.withLock { $0 }.map { isInRecvfrom(thread: $0) } ?? false
    }
    #expect(waits, "the loop's thread never waited in recvfrom")
    loop.stop()
    #expect(await waitUntil { exit.withLock { $0.ended } }, "stop() did not end the loop")
    #expect(exit.withLock { $0.error } == nil)
    let handled = receptions.withLock { $0 }
    #expect(handled.count == 1 && handled.first! == nil, "handled after the first: \(handled)")
  }

  /// Waits up to 5 s for the socket to become readable, then receives once.
  private func receiveWaiting(on socket: RouteNetlinkSocket, milliseconds: Int32 = 5000) throws
    -> RouteNetlinkSocket.Reception
  {
    var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
    _ = poll(&descriptor, 1, milliseconds)
    return try socket.receive()
  }
}
