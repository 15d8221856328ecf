import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A `sockaddr_un` for a filesystem path or, with a leading `@`, an abstract-namespace name.
struct UnixSocketAddress {
  private var storage = sockaddr_un()
  private let length: socklen_t

  /// Bytes available for the path, its terminating NUL included.
  static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

  init(path: String) throws(Errno) {
    var bytes = Array(path.utf8)
    if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
    guard !bytes.isEmpty, bytes.count < Self.maximumPathLength else {
      throw Errno(rawValue: ENAMETOOLONG)
    }
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
    length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes[0] == 0 ? 0 : 1))
  }

  /// Calls `body` with the address as a `sockaddr` pointer and its length.
  func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    withUnsafePointer(to: storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
  }
}
