import Backgrounder
import EventLoops
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// One check of a destination: its host resolved off the event loop (`getaddrinfo` blocks), then
/// a non-blocking TCP connect to each address in turn, bound to the primary link
/// (`SO_BINDTODEVICE`, where permitted), watched by the event loop with a timeout. The first
/// connect that succeeds makes the destination reachable; otherwise the last failure is the
/// answer. Nothing is sent: the connection is closed as soon as it is made.
enum DestinationConnect {
  /// A resolved address (a `sockaddr` of its family).
  struct Address: Sendable {
    var family: Int32
    var bytes: [UInt8]
  }

  /// Checks `text` (`host:port`) over `interface` and calls `done` on `loop`'s thread.
  static func check(
    _ text: String, interface: String?, timeout: Duration, loop: EventLoop,
    done: @escaping @Sendable (DestinationState) -> Void
  ) {
    guard case .success(let destination) = Destination.parse(text) else {
      loop.execute { done(.unreachable(.doesNotResolve)) }
      return
    }
    let connectAll: @Sendable ([Address]) -> Void = { addresses in
      connect(addresses[...], interface: interface, timeout: timeout, loop: loop, done: done)
    }
    if let address = numeric(destination) {
      loop.execute { connectAll([address]) }
      return
    }
    // `getaddrinfo` may wait seconds for a DNS server: it runs on a short-lived thread of its
    // own (one per lookup, ended when it answers), never on the loop, and hands the addresses
    // back to the loop.
    do {
      try SystemThread.detach(name: "bg-resolve") {
        let addresses = resolve(destination)
        loop.execute {
          addresses.isEmpty ? done(.unreachable(.doesNotResolve)) : connectAll(addresses)
        }
      }
    } catch {
      loop.execute { done(.unreachable(.doesNotResolve)) }
    }
  }

  /// The address of a destination written as an IPv4 or IPv6 address, or `nil` for a name.
  static func numeric(_ destination: Destination) -> Address? {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(destination.host, String(destination.port), &hints, &list) == 0 else {
      return nil
    }
    defer { freeaddrinfo(list) }
    return list.flatMap(address)
  }

  /// The addresses `destination`'s host resolves to (blocking); empty when it does not resolve.
  static func resolve(_ destination: Destination) -> [Address] {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(destination.host, String(destination.port), &hints, &list) == 0 else {
      return []
    }
    defer { freeaddrinfo(list) }
    var addresses: [Address] = []
    var entry = list
    while let current = entry {
      if let found = address(current) { addresses.append(found) }
      entry = current.pointee.ai_next
    }
    return addresses
  }

  private static func address(_ entry: UnsafeMutablePointer<addrinfo>) -> Address? {
    guard let raw = entry.pointee.ai_addr else { return nil }
    let bytes = UnsafeRawBufferPointer(start: raw, count: Int(entry.pointee.ai_addrlen))
    return Address(family: Int32(raw.pointee.sa_family), bytes: Array(bytes))
  }

  /// Connects to the first of `addresses`, then to the next after a failure (on the loop).
  private static func connect(
    _ addresses: ArraySlice<Address>, interface: String?, timeout: Duration, loop: EventLoop,
    last: DestinationFailure = .noRoute, done: @escaping @Sendable (DestinationState) -> Void
  ) {
    guard let address = addresses.first else { return done(.unreachable(last)) }
    attempt(address, interface: interface, timeout: timeout, loop: loop) { state in
      if case .unreachable(let failure) = state, addresses.count > 1 {
        connect(
          addresses.dropFirst(), interface: interface, timeout: timeout, loop: loop,
          last: failure, done: done)
      } else {
        done(state)
      }
    }
  }

  /// One non-blocking connect, watched for writability (or an error) with a timeout.
  private static func attempt(
    _ address: Address, interface: String?, timeout: Duration, loop: EventLoop,
    done: @escaping @Sendable (DestinationState) -> Void
  ) {
    let descriptor = socket(
      address.family,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      0)
    guard descriptor >= 0 else { return done(.unreachable(.noRoute)) }
    if let interface {
      // Binding needs CAP_NET_RAW on older kernels: unprivileged, follow the routes instead.
      _ = interface.withCString {
        setsockopt(descriptor, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
      }
    }
    let result = address.bytes.withUnsafeBytes {
      Glibc.connect(
        descriptor, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
    }
    if result == 0 {
      close(descriptor)
      return done(.reachable)
    }
    let connectError = SystemCallError.current("connect").errno
    guard connectError == .nowInProgress else {
      let failure = Self.failure(connectError.rawValue)
      close(descriptor)
      return done(.unreachable(failure))
    }
    let finish = Finish(descriptor: descriptor, loop: loop, done: done)
    do {
      let registration = try loop.register(descriptor, interest: .writable) { _ in
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        finish.end(error == 0 ? .reachable : .unreachable(Self.failure(error)))
      }
      let timer = loop.schedule(after: timeout) { finish.end(.unreachable(.timedOut)) }
      finish.armed(registration, timer)
    } catch {
      finish.end(.unreachable(.noRoute))
    }
  }

  /// What a connect error means for the destination.
  static func failure(_ error: Int32) -> DestinationFailure {
    switch error {
    case ECONNREFUSED, ECONNRESET: .refused
    case ETIMEDOUT: .timedOut
    default: .noRoute
    }
  }

  /// Ends one connect once (writable, or the timeout), on the loop's thread: deregisters,
  /// cancels the timer, closes the socket and answers.
  private final class Finish: @unchecked Sendable {
    // Touched only on the loop's thread.
    private let descriptor: Int32
    private let loop: EventLoop
    private let done: @Sendable (DestinationState) -> Void
    private var registration: EventLoop.Registration?
    private var timer: EventLoop.Timer?
    private var ended = false

    init(
      descriptor: Int32, loop: EventLoop, done: @escaping @Sendable (DestinationState) -> Void
    ) {
      self.descriptor = descriptor
      self.loop = loop
      self.done = done
    }

    func armed(_ registration: EventLoop.Registration, _ timer: EventLoop.Timer) {
      self.registration = registration
      self.timer = timer
    }

    func end(_ state: DestinationState) {
      guard !ended else { return }
      ended = true
      if let registration { loop.deregister(registration) }
      if let timer { loop.cancel(timer) }
      close(descriptor)
      done(state)
    }
  }
}
