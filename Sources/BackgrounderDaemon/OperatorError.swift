/// An error whose description is meant for the operator as is.
package struct OperatorError: Error, CustomStringConvertible {
  package var description: String

  package init(_ description: String) {
    self.description = description
  }
}
