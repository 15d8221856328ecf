import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Reads at most `limit` bytes of the file at `path` (a `/proc` or `/sys` attribute): opened
/// non-blocking, so that a FIFO planted where such a file belongs never holds the open or the
/// read; read until end of file or `limit`, each `read` through ``systemCall(_:path:_:)``.
/// Throws the open's or a read's error (a missing file: `ENOENT`).
public func readSmallFile(_ path: String, limit: Int) throws(SystemCallError) -> [UInt8] {
  let descriptor = try systemCall("open", path: path) {
    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
  }
  defer { close(descriptor) }
  guard limit > 0 else { return [] }
  var bytes = [UInt8](repeating: 0, count: limit)
  var count = 0
  while count < limit {
    let read = try systemCall("read", path: path) {
      bytes.withUnsafeMutableBytes { buffer in
        Glibc.read(descriptor, buffer.baseAddress! + count, limit - count)
      }
    }
    if read == 0 { break }
    count += read
  }
  bytes.removeLast(limit - count)
  return bytes
}
