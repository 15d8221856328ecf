import Glibc
import Netlink
import Testing

/// The route socket in a namespace of its own: kernel datagrams are accepted, datagrams from
/// another process's socket are reported as foreign and never parsed.
@Suite(.enabled(if: getuid() == 0, "needs root to create network namespaces"))
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
      var address = sockaddr_nl()
      address.nl_family = sa_family_t(AF_NETLINK)
      address.nl_pid = target
      let message = DumpRequest.message(for: .link, sequence: 1)
      let sent = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(sender, message, message.count, 0, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
        }
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
    #expect(names.contains("veth0"))
  }

  /// Waits up to 5 s for the socket to become readable, then receives once.
  private func receiveWaiting(on socket: RouteNetlinkSocket) throws -> RouteNetlinkSocket.Reception
  {
    var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
    _ = poll(&descriptor, 1, 5000)
    return try socket.receive()
  }
}
