/// Why a document is not valid TOML 1.0, and where: the position of the first offending
/// character and what was expected there.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Where the problem was found.
  public var position: TOMLPosition
  /// What is wrong, in words (for example `expected '=' after a key, found 'x'`).
  public var message: String

  /// An error at `position`.
  public init(position: TOMLPosition, message: String) {
    self.position = position
    self.message = message
  }

  /// `line:column: message`.
  public var description: String { "\(position): \(message)" }
}
