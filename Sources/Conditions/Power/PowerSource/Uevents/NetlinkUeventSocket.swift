import CSystemShims
import EventLoops
import Glibc
import Locking
import SystemCalls
import SystemPackage

/// A `NETLINK_KOBJECT_UEVENT` socket bound to the kernel's multicast group 1.
///
/// Opened with Glibc directly (no libnl, no udev daemon). With a `subsystem`, a socket filter in
/// the kernel drops every uevent of another subsystem before it is queued, so the socket (and the
/// thread watching it) never wakes for them: a busy machine's USB, block, backlight or thermal
/// uevents cost the process nothing. Datagrams whose sender is not the
/// kernel (`nl_pid != 0` in `recvfrom`'s address) are dropped and counted, unless the
/// ``SenderPolicy`` names that sender. Each socket can be read by one ``inputs()`` stream,
/// served by an `EventLoop` (the one given, or the process's shared one).
public final class NetlinkUeventSocket: UeventSource {
  /// Which senders are accepted.
  public enum SenderPolicy: Sendable, Equatable {
    /// Only the kernel (port ID 0): the production setting.
    case kernelOnly
    /// The kernel and one local socket: for replaying recorded uevents from a sender socket in
    /// an isolated network namespace (integration tests and benchmarks).
    case kernelAndPort(UInt32)

    func accepts(_ portID: UInt32) -> Bool {
      switch self {
      case .kernelOnly: portID == 0
      case .kernelAndPort(let allowed): portID == 0 || portID == allowed
      }
    }
  }

  /// Counts of what the socket received.
  public struct Counters: Sendable, Equatable {
    /// Datagrams received and passed on.
    public var delivered = 0
    /// Datagrams dropped because the sender was not accepted.
    public var rejectedSenders = 0
    /// Datagrams dropped because they did not fit the receive buffer.
    public var truncated = 0
    /// `ENOBUFS` reports (messages lost in the kernel).
    public var overflows = 0
  }

  /// The kernel's multicast group for uevents.
  public static let kernelGroup: UInt32 = 1
  /// Larger than the kernel's `UEVENT_BUFFER_SIZE` (2048).
  static let receiveBufferSize = 8192

  private let descriptor: FileDescriptor
  private let senderPolicy: SenderPolicy
  private let eventLoop: EventLoop?
  private let state: Lock<State>

  private struct State {
    var counters = Counters()
    var started = false
    var closed = false
  }

  /// The socket's netlink port ID (assigned by the kernel).
  public let portID: UInt32

  /// Opens and binds the socket in the calling thread's network namespace; `eventLoop` will
  /// watch it (without one, the process's shared loop: `EventLoop.shared()`).
  /// - Parameters:
  ///   - subsystem: When given (e.g. `power_supply`), only uevents whose `SUBSYSTEM` is this one
  ///     reach the socket (a classic BPF filter attached before `bind`); others are dropped in
  ///     the kernel. `nil`: every uevent is delivered.
  /// - Throws: ``SystemCallError`` from `socket`, `setsockopt(SO_ATTACH_FILTER)`, `bind` or
  ///   `getsockname`.
  public init(
    senderPolicy: SenderPolicy = .kernelOnly, subsystem: String? = nil, eventLoop: EventLoop? = nil
  ) throws(SystemCallError) {
    let raw = socket(
      AF_NETLINK,
      Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      NetlinkAddress.kobjectUeventProtocol)
    guard raw >= 0 else { throw SystemCallError.current("socket") }
    let descriptor = FileDescriptor(rawValue: raw)
    var bufferSize: Int32 = 1 << 20
    // Best effort: a larger queue makes ENOBUFS rarer; failure leaves the default.
    _ = setsockopt(raw, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
    // Before bind, so that nothing unfiltered is ever queued.
    if let subsystem, csystem_attach_uevent_subsystem_filter(raw, subsystem) != 0 {
      let error = SystemCallError.current("setsockopt SO_ATTACH_FILTER")
      try? descriptor.close()
      throw error
    }
    let address = NetlinkAddress(portID: 0, groups: Self.kernelGroup)
    let bound = address.withSockaddr { bind(raw, $0, $1) }
    let (named, boundAddress) = NetlinkAddress.receive { getsockname(raw, $0, $1) }
    guard bound == 0, named == 0, let boundAddress else {
      let error = SystemCallError.current(bound == 0 ? "getsockname" : "bind")
      try? descriptor.close()
      throw error
    }
    self.portID = boundAddress.portID
    self.descriptor = descriptor
    self.senderPolicy = senderPolicy
    self.eventLoop = eventLoop
    self.state = Lock(State())
  }

  deinit {
    let shouldClose = state.withLock { !$0.started && !$0.closed }
    if shouldClose { try? descriptor.close() }
  }

  /// What has been received so far.
  public var counters: Counters { state.withLock { $0.counters } }

  /// Delivers datagrams until the consumer stops; the socket is closed then.
  /// - Throws: ``NetlinkUeventSocketError/alreadyReading`` on a second call.
  public func inputs() throws -> AsyncThrowingStream<UeventInput, any Error> {
    let alreadyStarted = state.withLock { state in
      defer { state.started = true }
      return state.started
    }
    guard !alreadyStarted else { throw NetlinkUeventSocketError.alreadyReading }
    let (stream, continuation) = AsyncThrowingStream<UeventInput, any Error>.makeStream()
    let loop = try eventLoop ?? EventLoop.shared()
    let registration = try loop.register(descriptor.rawValue, interest: .readable) {
      [self] _ in drain(into: continuation)
    }
    continuation.onTermination = { [self] _ in
      loop.execute { [self] in
        loop.deregister(registration)
        state.withLock { $0.closed = true }
        try? descriptor.close()
      }
    }
    return stream
  }

  /// Reads every queued datagram (the socket is non-blocking).
  private func drain(into continuation: AsyncThrowingStream<UeventInput, any Error>.Continuation) {
    var buffer = [UInt8](repeating: 0, count: Self.receiveBufferSize)
    while true {
      let (received, sender) = buffer.withUnsafeMutableBytes { bytes in
        NetlinkAddress.receive { address, length in
          Result { () throws(SystemCallError) -> Int in
            try systemCall("recvfrom") {
              recvfrom(
                descriptor.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_TRUNC), address,
                length)
            }
          }
        }
      }
      let count: Int
      switch received {
      case .success(let value):
        count = value
      case .failure(let error) where error.errno == .resourceTemporarilyUnavailable:
        return
      case .failure(let error) where error.errno == .noBufferSpace:
        state.withLock { $0.counters.overflows += 1 }
        continuation.yield(.overflow)
        continue
      case .failure(let error):
        continuation.finish(throwing: error)
        return
      }
      guard let sender, senderPolicy.accepts(sender.portID) else {
        state.withLock { $0.counters.rejectedSenders += 1 }
        continue
      }
      guard count <= buffer.count else {
        state.withLock { $0.counters.truncated += 1 }
        continue
      }
      state.withLock { $0.counters.delivered += 1 }
      continuation.yield(.datagram(Array(buffer.prefix(count))))
    }
  }

}

/// Why ``NetlinkUeventSocket/inputs()`` refused.
public enum NetlinkUeventSocketError: Error, Equatable, CustomStringConvertible {
  /// ``NetlinkUeventSocket/inputs()`` was already called on this socket.
  case alreadyReading

  /// A message naming the problem.
  public var description: String {
    switch self {
    case .alreadyReading: "the uevent socket is already being read by another stream"
    }
  }
}
