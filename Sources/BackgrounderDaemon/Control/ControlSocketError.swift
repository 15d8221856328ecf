import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Why the control socket could not be used.
package enum ControlSocketError: Error, CustomStringConvertible, Equatable {
  /// No daemon listens on the socket (missing file or connection refused).
  case noDaemon(path: String)
  /// Another daemon already serves this socket.
  case alreadyServed(path: String)
  /// A system call failed (its ``SystemCallError/path`` is the socket's).
  case system(SystemCallError)
  /// The peer sent something that is not a valid message.
  case badMessage(String)
  /// The path does not fit in `sockaddr_un.sun_path`.
  case pathTooLong(path: String, limit: Int)
  /// The socket's directory could be tampered with by someone else.
  case unsafeDirectory(path: String, PrivateDirectoryError)
  /// Something that is not a socket exists at the path; it is left untouched.
  case notASocket(path: String, owner: uid_t, mode: mode_t)
  /// The process serving the socket runs as a user we do not trust; nothing was sent.
  case untrustedPeer(path: String, uid: uid_t, pid: pid_t)

  package var description: String {
    switch self {
    case .noDaemon(let path): "no daemon is listening on \(path)"
    case .alreadyServed(let path): "another backgrounder daemon is already listening on \(path)"
    case .system(let failure): "\(failure)"
    case .badMessage(let text): "bad control message: \(text)"
    case .pathTooLong(let path, let limit):
      "control socket path \(path) is \(path.utf8.count) bytes; a Unix socket path must be "
        + "shorter than \(limit) bytes: choose a shorter [control] socket"
    case .unsafeDirectory(let path, let problem):
      "control socket \(path): \(problem)"
    case .notASocket(let path, let owner, let mode):
      "refusing to use \(path) as the control socket: it exists and is not a socket (owner uid "
        + "\(owner), mode \(PrivateDirectoryError.octal(mode))); it was left untouched"
    case .untrustedPeer(let path, let uid, let pid):
      "refusing to talk to \(path): it is served by uid \(uid) (pid \(pid)), not by uid "
        + "\(geteuid()) or root; nothing was sent"
    }
  }
}
