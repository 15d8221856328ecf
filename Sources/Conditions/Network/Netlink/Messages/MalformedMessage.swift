/// A netlink message that could not be decoded; `reason` names what was wrong.
public struct MalformedMessage: Error, Sendable, Equatable, CustomStringConvertible {
  /// What was wrong, e.g. "nlmsg_len 4000 exceeds the 52 bytes available".
  public var reason: String
  /// The message type from the header, when the header itself was readable.
  public var messageType: UInt16?

  /// Creates an error naming what was wrong.
  public init(_ reason: String, messageType: UInt16? = nil) {
    self.reason = reason
    self.messageType = messageType
  }

  /// A one-line explanation.
  public var description: String {
    if let messageType {
      return "malformed netlink message (type \(messageType)): \(reason)"
    }
    return "malformed netlink message: \(reason)"
  }
}
