#if canImport(Glibc)
  import Glibc
#endif

/// Reads small files the daemon trusts (run records) whole, refusing anything but a regular
/// file (opened `O_NONBLOCK`: a FIFO never blocks the read) and anything larger than a bound.
enum BoundedFile {
  /// The contents of `name` in `directory`, at most `limit` bytes.
  static func read(_ name: String, in directory: TrustedDirectory, limit: Int)
    throws(PrivateDirectoryError) -> [UInt8]
  {
    let path = directory.display(name)
    let fd = try directory.openFile(name, flags: O_RDONLY | O_NONBLOCK)
    defer { close(fd) }
    let status = try SystemCall.status(at: fd, "", path: path)
    guard status.isRegularFile else {
      throw .notARegularFile(path: path, owner: status.owner, mode: status.mode)
    }
    var contents = [UInt8](repeating: 0, count: limit + 1)
    var count = 0
    while count <= limit {
      let read = try SystemCall.retrying("read", path) {
        contents.withUnsafeMutableBytes {
          Glibc.read(fd, $0.baseAddress! + count, $0.count - count)
        }
      }
      if read == 0 { break }
      count += read
    }
    guard count <= limit else { throw .tooLarge(path: path, limit: limit) }
    return Array(contents[..<count])
  }
}
