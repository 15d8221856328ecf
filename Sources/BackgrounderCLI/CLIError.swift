import ArgumentParser

/// A failure reported to the user as `Error: <message>` with exit status 1.
struct CLIError: Error, CustomStringConvertible {
  var description: String

  init(_ description: String) {
    self.description = description
  }
}
