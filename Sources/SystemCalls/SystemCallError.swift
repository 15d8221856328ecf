import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// A failed system call: which one, on what path when there is one, and its `errno`. The one
/// error type that carries an `errno`: ``systemCall(_:path:_:)`` throws it, and other errors wrap it
/// rather than flatten the errno.
public struct SystemCallError: Error, Equatable, CustomStringConvertible {
  /// The call and, when useful, its object: `"epoll_ctl"`, `"recvfrom netlink"`.
  public var operation: String
  /// The file or socket path the call was about, when there is one.
  public var path: String?
  /// What the kernel said.
  public var errno: Errno

  public init(_ operation: String, path: String? = nil, errno: Errno) {
    self.operation = operation
    self.path = path
    self.errno = errno
  }

  /// The calling thread's `errno` right after `operation` failed.
  public static func current(_ operation: String, path: String? = nil) -> SystemCallError {
    SystemCallError(operation, path: path, errno: Errno(rawValue: Glibc.errno))
  }

  /// `"operation path: message"`, or `"operation: message"` without a path.
  public var description: String {
    guard let path else { return "\(operation): \(errno)" }
    return "\(operation) \(path): \(errno)"
  }
}
