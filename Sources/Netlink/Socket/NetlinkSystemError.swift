import Glibc

/// A failed system or libnl call, naming the call and the error.
public struct NetlinkSystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call that failed, e.g. "setns /var/run/netns/test".
  public var operation: String
  /// The errno value (positive), or 0 when `detail` carries a libnl error text.
  public var errno: Int32
  /// Extra text (libnl's error message).
  public var detail: String?

  /// Creates an error for `operation` failing with `errno`.
  public init(operation: String, errno: Int32, detail: String? = nil) {
    self.operation = operation
    self.errno = errno
    self.detail = detail
  }

  /// A one-line explanation.
  public var description: String {
    if let detail { return "\(operation) failed: \(detail)" }
    return "\(operation) failed: \(String(cString: strerror(errno)))"
  }
}
