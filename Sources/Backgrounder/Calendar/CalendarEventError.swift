/// Why a calendar expression was rejected: the expression and the part that is wrong.
public struct CalendarEventError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The expression as given.
  public var expression: String
  /// What is wrong, naming the offending part.
  public var reason: String

  /// Creates an error.
  public init(expression: String, reason: String) {
    self.expression = expression
    self.reason = reason
  }

  /// "invalid calendar expression 'EXPR': REASON".
  public var description: String { "invalid calendar expression '\(expression)': \(reason)" }
}
