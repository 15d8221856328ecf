import Foundation
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Newline-delimited JSON over a stream socket, with a size cap and timeouts.
enum ControlFraming {
  /// Longest message accepted, in bytes.
  static let maximumMessageSize = 256 * 1024

  static func setReceiveTimeout(_ fd: Int32, _ timeout: Duration) {
    let (seconds, attoseconds) = timeout.components
    var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
  }

  static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(ControlSocketError) {
    var offset = 0
    while offset < data.count {
      let written = data.withUnsafeBytes { buffer in
        send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
      }
      if written < 0 {
        if errno == EINTR { continue }
        throw .system(operation: "write", path: path, errno: Errno(rawValue: errno))
      }
      offset += written
    }
  }

  /// Reads up to the first newline (excluded); throws on EOF before one, timeout or oversize.
  static func readLine(_ fd: Int32, path: String) throws(ControlSocketError) -> Data {
    var message = Data()
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = recv(fd, &chunk, chunk.count, 0)
      if count < 0 {
        if errno == EINTR { continue }
        throw .system(operation: "read", path: path, errno: Errno(rawValue: errno))
      }
      if count == 0 { throw .badMessage("connection closed before a complete line") }
      if let newline = chunk[..<count].firstIndex(of: UInt8(ascii: "\n")) {
        message.append(contentsOf: chunk[..<newline])
        return message
      }
      message.append(contentsOf: chunk[..<count])
      if message.count > maximumMessageSize { throw .badMessage("message over 256 KiB") }
    }
  }
}
