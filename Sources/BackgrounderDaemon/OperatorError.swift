/// An error whose description is meant for the operator as is.
public struct OperatorError: Error, CustomStringConvertible {
  public var description: String

  public init(_ description: String) {
    self.description = description
  }
}
