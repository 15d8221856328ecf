import SystemPackage

/// Why the control socket could not be used.
public enum ControlSocketError: Error, CustomStringConvertible, Equatable {
  /// No daemon listens on the socket (missing file or connection refused).
  case noDaemon(path: String)
  /// Another daemon already serves this socket.
  case alreadyServed(path: String)
  /// A system call failed.
  case system(operation: String, path: String, errno: Errno)
  /// The peer sent something that is not a valid message.
  case badMessage(String)

  public var description: String {
    switch self {
    case .noDaemon(let path): "no daemon is listening on \(path)"
    case .alreadyServed(let path): "another backgrounder daemon is already listening on \(path)"
    case .system(let operation, let path, let errno): "\(operation) \(path): \(errno)"
    case .badMessage(let text): "bad control message: \(text)"
    }
  }
}
