/// A failed libnl call, with libnl's own error text (`nl_geterror`). A failed system call is a
/// `SystemCallError` instead, the one error type that carries an `errno`.
public struct LibnlError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call that failed, e.g. "nl_connect NETLINK_ROUTE".
  public var operation: String
  /// libnl's error text.
  public var message: String

  /// Creates an error for `operation` failing with libnl's `message`.
  public init(operation: String, message: String) {
    self.operation = operation
    self.message = message
  }

  /// A one-line explanation.
  public var description: String { "\(operation) failed: \(message)" }
}
