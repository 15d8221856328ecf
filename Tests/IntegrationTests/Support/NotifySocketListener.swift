import Foundation
import Locking

#if canImport(Glibc)
  import Glibc
#endif

/// A bound Unix datagram socket standing in for systemd's `$NOTIFY_SOCKET`: a thread collects
/// every datagram the daemon sends, with the time it arrived.
final class NotifySocketListener: Sendable {
  struct Message: Sendable {
    var text: String
    var receivedAt: ContinuousClock.Instant
  }

  let path: String
  private let fd: Int32
  private let messages = Lock<[Message]>([])
  private let stopped = Lock(false)

  init(directory: String) throws {
    path = directory + "/notify-" + String(UInt32.random(in: 0...UInt32.max), radix: 16) + ".sock"
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard result == 0 else {
      close(fd)
      throw DaemonHarnessError("cannot bind \(path): errno \(errno)")
    }
    var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let thread = Thread { [self] in collect() }
    thread.start()
  }

  /// Stops collecting and closes the socket.
  func stop() {
    stopped.withLock { $0 = true }
  }

  /// Every datagram so far.
  var received: [Message] { messages.withLock { $0 } }

  /// The datagrams so far whose text contains `line` as one of its lines.
  func received(_ line: String) -> [Message] {
    received.filter { $0.text.split(separator: "\n").contains { $0 == line } }
  }

  private func collect() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !stopped.withLock({ $0 }) {
      let count = recv(fd, &buffer, buffer.count, 0)
      guard count > 0 else { continue }
      let message = Message(
        text: String(decoding: buffer[..<count], as: UTF8.self), receivedAt: .now)
      messages.withLock { $0.append(message) }
    }
    close(fd)
    unlink(path)
  }
}
