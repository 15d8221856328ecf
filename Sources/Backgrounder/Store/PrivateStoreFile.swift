import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Creates the store file before SQLite opens it, so that it is private from its first byte:
/// mode `0600`, never through a symlink (`O_EXCL | O_NOFOLLOW`). SQLite gives the `-wal` and
/// `-shm` files the mode of the database file, so they are `0600` too. An existing file is
/// left as it is.
enum PrivateStoreFile {
  /// Creates `path` empty with mode `0600` unless something already exists there.
  static func create(_ path: String) throws(StoreError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd >= 0 {
      close(fd)
      return
    }
    let failure = errno
    if failure == EEXIST { return }
    throw .openFailed(path: path, detail: String(cString: strerror(failure)))
  }
}
