#if canImport(Glibc)
  import Glibc
#endif

/// Tightens files written by older versions: an existing regular file owned by this user that
/// group or others may read is made `0600` (never through a symlink).
enum PrivateFiles {
  static func restrict(_ paths: [String]) {
    for path in paths {
      let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
      guard fd >= 0 else { continue }
      defer { close(fd) }
      var status = stat()
      guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
        status.st_uid == geteuid(), status.st_mode & 0o077 != 0
      else { continue }
      _ = fchmod(fd, 0o600)
    }
  }
}
