import Foundation
import SystemCalls
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
        Result { () throws(SystemCallError) in
          try systemCall("write") {
            send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
          }
        }
      }
      do {
        offset += try written.get()
      } catch {
        throw .system(SystemCallError(error.operation, path: path, errno: error.errno))
      }
    }
  }
}
