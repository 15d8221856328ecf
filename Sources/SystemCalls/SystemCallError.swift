import SystemPackage

/// A failed system call: which one (and on what, when that helps), and its `errno`. The one
/// error type of ``systemCall(_:_:)``; other errors wrap it rather than flatten the errno.
public struct SystemCallError: Error, Equatable, CustomStringConvertible {
  /// The call and, when useful, its object: `"epoll_ctl"`, `"connect /run/backgrounder.sock"`.
  public var operation: String
  /// What the kernel said.
  public var errno: Errno

  public init(_ operation: String, errno: Errno) {
    self.operation = operation
    self.errno = errno
  }

  public var description: String { "\(operation): \(errno)" }
}
