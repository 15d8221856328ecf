/// A TOML value. Integers are 64-bit signed; tables and arrays keep where each of their keys and
/// elements was written.
public enum TOMLValue: Sendable, Equatable {
  /// A basic or literal string, one-line or multi-line, escapes resolved.
  case string(String)
  /// A decimal, hexadecimal, octal or binary integer.
  case integer(Int64)
  /// A float, including `inf` and `nan`.
  case float(Double)
  /// `true` or `false`.
  case boolean(Bool)
  /// An offset date-time, local date-time, local date or local time.
  case dateTime(TOMLDateTime)
  /// A static array (`[1, 2]`) or an array of tables (`[[name]]`).
  case array([TOMLNode])
  /// A table: standard, inline, implied by a header or a dotted key, or an array element.
  case table(TOMLTable)

  /// The TOML name of the value's type, for messages: `string`, `integer`, `float`, `boolean`,
  /// `offset date-time`, `local date-time`, `local date`, `local time`, `array` or `table`.
  public var typeName: String {
    switch self {
    case .string: "string"
    case .integer: "integer"
    case .float: "float"
    case .boolean: "boolean"
    case .dateTime(let value):
      switch value.kind {
      case .offsetDateTime: "offset date-time"
      case .localDateTime: "local date-time"
      case .localDate: "local date"
      case .localTime: "local time"
      }
    case .array: "array"
    case .table: "table"
    }
  }

  /// The string, if this is one.
  public var string: String? {
    if case .string(let value) = self { value } else { nil }
  }

  /// The integer, if this is one.
  public var integer: Int64? {
    if case .integer(let value) = self { value } else { nil }
  }

  /// The float, if this is one (an integer is not converted).
  public var float: Double? {
    if case .float(let value) = self { value } else { nil }
  }

  /// The boolean, if this is one.
  public var boolean: Bool? {
    if case .boolean(let value) = self { value } else { nil }
  }

  /// The date-time, if this is one.
  public var dateTime: TOMLDateTime? {
    if case .dateTime(let value) = self { value } else { nil }
  }

  /// The elements, if this is an array (static or of tables).
  public var array: [TOMLNode]? {
    if case .array(let value) = self { value } else { nil }
  }

  /// The table, if this is one (standard, inline or an element of an array of tables).
  public var table: TOMLTable? {
    if case .table(let value) = self { value } else { nil }
  }
}

/// A value and where it was written. Two nodes are equal when their values are: the position
/// does not take part.
public struct TOMLNode: Sendable, Equatable {
  /// The value.
  public var value: TOMLValue
  /// Where the value starts (for a table: its header or its `{`).
  public var position: TOMLPosition

  /// A value written at `position`.
  public init(_ value: TOMLValue, at position: TOMLPosition) {
    self.value = value
    self.position = position
  }

  public static func == (lhs: TOMLNode, rhs: TOMLNode) -> Bool { lhs.value == rhs.value }
}
