import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// An exclusive advisory lock (`flock`) on `<store>.lock`, held by the daemon while it runs so
/// that CLI verbs never edit a store that a live daemon owns.
public final class StoreLock: Sendable {
  private let fd: Int32

  /// Takes the lock without waiting; nil when another process holds it.
  public init?(storePath: String) throws {
    let path = storePath + ".lock"
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw OperatorError("cannot open \(path): \(String(cString: strerror(errno)))")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      close(fd)
      return nil
    }
    self.fd = fd
  }

  deinit {
    close(fd)
  }
}
