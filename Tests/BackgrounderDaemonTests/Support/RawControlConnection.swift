import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Writes raw bytes to a control socket and reads the raw reply, for malformed-input tests.
struct RawControlConnection {
  let path: String

  func exchange(_ text: String) throws -> String {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    let connected = withUnixSocketAddress(path) { connect(fd, $0, $1) }
    guard connected == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    _ = text.withCString { send(fd, $0, strlen($0), 0) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = recv(fd, &buffer, buffer.count, 0)
    return String(decoding: buffer[..<max(count, 0)], as: UTF8.self)
  }
}
