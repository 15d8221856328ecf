import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A bound Unix datagram socket standing in for systemd's notify socket.
final class DatagramReceiver {
  private let fd: Int32
  private let path: String

  /// `timeout` bounds each `receive()`.
  init(path: String, timeout: Duration = .seconds(2)) throws {
    self.path = path
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    let result = withUnixSocketAddress(path) { bind(fd, $0, $1) }
    guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL) }
    let (seconds, attoseconds) = timeout.components
    var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit {
    close(fd)
    if !path.hasPrefix("@") { unlink(path) }
  }

  func receive() throws -> String {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = retryingInterrupts { recv(fd, &buffer, buffer.count, 0) }
    guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return String(decoding: buffer[..<count], as: UTF8.self)
  }
}
