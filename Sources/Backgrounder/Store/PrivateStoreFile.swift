import Foundation
import SystemCalls

#if canImport(Glibc)
  import Glibc
#endif

/// Creates the store file before SQLite opens it, so that it is private from its first byte:
/// mode `0600`, never through a symlink (`O_EXCL | O_NOFOLLOW`). SQLite gives the `-wal` and
/// `-shm` files the mode of the database file, so they are `0600` too. An existing file is
/// left as it is.
enum PrivateStoreFile {
  /// Creates `path` empty with mode `0600` unless something already exists there, which must
  /// then be a regular file (``checkRegular(_:displayPath:)``).
  static func create(_ path: String) throws(StoreError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd >= 0 {
      close(fd)
      return
    }
    let failure = SystemCallError.current("open", path: path).errno
    if failure == .fileExists { return try checkRegular(path) }
    throw .openFailed(path: path, detail: "\(failure)")
  }

  /// Refuses a store path that names something other than a regular file before SQLite opens
  /// it: SQLite's blocking `open` would wait forever on a FIFO without a writer (and its reads
  /// on one opened read-write). Checked with `openRegularFile` (non-blocking, `fstat`): "cannot
  /// open store PATH: is a FIFO, not a regular file". A missing file is left to the caller.
  static func checkRegular(_ path: String, displayPath: String? = nil) throws(StoreError) {
    do {
      close(try openRegularFile(path).descriptor)
    } catch .system(let error) where error.errno.rawValue == ENOENT {
      return
    } catch {
      throw .openFailed(path: displayPath ?? path, detail: error.reason)
    }
  }
}
