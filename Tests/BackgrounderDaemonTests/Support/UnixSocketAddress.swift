#if canImport(Glibc)
  import Glibc
#endif

/// Calls `body` with the `sockaddr_un` of `path` and its length; a leading `@` names an
/// abstract socket (Linux: a name that starts with a NUL byte, no file).
func withUnixSocketAddress<Result>(
  _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) -> Result {
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  var bytes = Array(path.utf8)
  let isAbstract = bytes.first == UInt8(ascii: "@")
  if isAbstract { bytes[0] = 0 }
  precondition(
    bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
  withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
  // A filesystem path keeps its terminating NUL; an abstract name is exactly its bytes.
  let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1))
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
  }
}
