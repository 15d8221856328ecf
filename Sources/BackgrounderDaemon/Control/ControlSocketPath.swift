import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// The checks both ends make on a control socket path before using it. A path starting with `@`
/// names an abstract socket: no file, no directory.
struct ControlSocketPath {
  let path: String

  var isAbstract: Bool { path.hasPrefix("@") }

  /// The `sockaddr_un` for the path; a clear error when it does not fit in `sun_path`.
  func address() throws(ControlSocketError) -> UnixSocketAddress {
    do {
      return try UnixSocketAddress(path: path)
    } catch {
      throw .pathTooLong(path: path, limit: UnixSocketAddress.maximumPathLength)
    }
  }

  /// The daemon's side: the directory is created `0700` or must be private and ours.
  func prepareDirectory() throws(ControlSocketError) {
    guard !isAbstract else { return }
    do {
      try PrivateDirectory.prepare(containing: path, owners: .ownUser)
    } catch {
      throw .unsafeDirectory(path: path, error)
    }
  }

  /// The client's side: the directory must be private and belong to us or root; a missing
  /// directory means no daemon.
  func checkDirectory() throws(ControlSocketError) {
    guard !isAbstract else { return }
    do {
      try PrivateDirectory.check(PrivateDirectory.parent(of: path), owners: .ownUserOrRoot)
    } catch .system(let failure) where failure.errno == .noSuchFileOrDirectory {
      throw .noDaemon(path: path)
    } catch {
      throw .unsafeDirectory(path: path, error)
    }
  }

  /// Whether a socket file exists at the path; throws when something else does (it must never
  /// be unlinked or connected to).
  func socketExists() throws(ControlSocketError) -> Bool {
    guard !isAbstract else { return false }
    var status = stat()
    guard lstat(path, &status) == 0 else {
      let failure = SystemCallError.current("lstat", path: path)
      if failure.errno == .noSuchFileOrDirectory { return false }
      throw .system(failure)
    }
    guard status.st_mode & S_IFMT == S_IFSOCK else {
      throw .notASocket(path: path, owner: status.st_uid, mode: status.st_mode & 0o7777)
    }
    return true
  }
}
