/// A place in a TOML document: 1-based line and 1-based column, the column counted in Unicode
/// scalars from the start of the line (a tab counts as one).
public struct TOMLPosition: Sendable, Hashable, CustomStringConvertible {
  /// 1-based line number.
  public var line: Int
  /// 1-based column, in Unicode scalars.
  public var column: Int

  /// A position at `line`:`column`.
  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }

  /// `line:column`.
  public var description: String { "\(line):\(column)" }
}
