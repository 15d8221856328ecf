import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Why a path where a regular file is expected could not be opened: the system's error, or
/// what is there instead (a FIFO, a directory, a device, a socket).
public enum RegularFileError: Error, Equatable, CustomStringConvertible {
  /// The open, `fstat` or a read failed.
  case system(SystemCallError)
  /// `path` names something other than a regular file; `kind` is what (``fileKind(mode:)``).
  case notARegularFile(path: String, kind: String)

  /// The system error, or "PATH: is a FIFO, not a regular file".
  public var description: String {
    switch self {
    case .system(let error): "\(error)"
    case .notARegularFile(let path, let kind): "\(path): \(reason(kind))"
    }
  }

  /// What is wrong without the path: the system's message, or "is a FIFO, not a regular file".
  public var reason: String {
    switch self {
    case .system(let error): "\(error.errno)"
    case .notARegularFile(_, let kind): reason(kind)
    }
  }

  private func reason(_ kind: String) -> String { "is \(kind), not a regular file" }
}

/// `O_PATH` (`<fcntl.h>` defines it only with `_GNU_SOURCE`, which Swift's Glibc module does
/// not): a descriptor that names a file without opening it for reading or writing; `fstat`,
/// `fstatat`, `openat`, `mkdirat` and `readlinkat` work through it.
public let openPath: Int32 = 0o10_000_000

/// What the type bits of `mode` (`st_mode`) name: "a regular file", "a FIFO", "a directory",
/// "a symlink", "a socket", "a character device", "a block device".
public func fileKind(mode: mode_t) -> String {
  switch mode & S_IFMT {
  case S_IFREG: "a regular file"
  case S_IFIFO: "a FIFO"
  case S_IFDIR: "a directory"
  case S_IFLNK: "a symlink"
  case S_IFSOCK: "a socket"
  case S_IFCHR: "a character device"
  case S_IFBLK: "a block device"
  default: "of unknown type \(mode & S_IFMT)"
  }
}

/// Opens `path` where a regular file is expected (the store, a config, a run record, a
/// credential file, a `/proc` or `/sys` attribute): non-blocking and close-on-exec, so that a
/// FIFO planted there never holds the open (nor, for a read-write open, a read), then checked
/// with `fstat`. Anything but a regular file is closed and refused with what it is. Returns
/// the descriptor (the caller closes it) and its `stat`. `O_NONBLOCK` changes nothing for a
/// regular file. A relative `path` is looked up from the directory open as `directory` (the
/// current directory by default).
public func openRegularFile(
  _ path: String, relativeTo directory: Int32 = AT_FDCWD, flags: Int32 = O_RDONLY
) throws(RegularFileError) -> (descriptor: Int32, status: stat) {
  let descriptor: Int32
  do {
    descriptor = try systemCall("open", path: path) {
      openat(directory, path, flags | O_CLOEXEC | O_NONBLOCK)
    }
  } catch {
    throw .system(error)
  }
  var status = stat()
  do {
    _ = try systemCall("fstat", path: path) { fstat(descriptor, &status) }
  } catch {
    close(descriptor)
    throw .system(error)
  }
  guard status.st_mode & S_IFMT == S_IFREG else {
    close(descriptor)
    throw .notARegularFile(path: path, kind: fileKind(mode: status.st_mode))
  }
  return (descriptor, status)
}

/// Reads at most `limit` bytes of the regular file at `path` (a `/proc` or `/sys` attribute, a
/// small file of the config): opened by ``openRegularFile(_:relativeTo:flags:)``, so that a
/// FIFO planted where such a file belongs is refused, never waited on; read until end of file
/// or `limit`, each `read` through ``systemCall(_:path:_:)``. Throws the open's or a read's error (a
/// missing file: `ENOENT`). A file that reports its size (a `/proc` attribute reports 0) is
/// read into a buffer of that size and one byte more, not of `limit` bytes: a large limit
/// costs a small file nothing. A relative `path` is looked up from `directory`, as
/// ``openRegularFile(_:relativeTo:flags:)`` does.
public func readSmallFile(_ path: String, relativeTo directory: Int32 = AT_FDCWD, limit: Int)
  throws(RegularFileError) -> [UInt8]
{
  let (descriptor, status) = try openRegularFile(path, relativeTo: directory)
  defer { close(descriptor) }
  guard limit > 0 else { return [] }
  let size = Int(status.st_size)
  var bytes = [UInt8](repeating: 0, count: size > 0 && size < limit ? size + 1 : limit)
  var count = 0
  while count < bytes.count {
    let read: Int
    do {
      read = try systemCall("read", path: path) {
        bytes.withUnsafeMutableBytes { buffer in
          Glibc.read(descriptor, buffer.baseAddress! + count, buffer.count - count)
        }
      }
    } catch {
      throw .system(error)
    }
    if read == 0 { break }
    count += read
    // The file grew after `fstat`: read on, up to `limit`.
    if count == bytes.count, count < limit {
      bytes.append(contentsOf: repeatElement(0, count: min(count, limit - count)))
    }
  }
  bytes.removeLast(bytes.count - count)
  return bytes
}
