/// Values: dispatch on the first byte, booleans, arrays and inline tables.
extension Parser {
  /// The value at `index`; `depth` counts the tables and arrays around it.
  mutating func parseValue(depth: Int) throws(TOMLError) -> TOMLNode {
    let start = markPosition()
    guard let byte = current else { throw expected("a value") }
    let value: TOMLValue
    switch byte {
    case UInt8(ascii: "\""):
      value = .string(isAt("\"\"\"") ? try parseMultiLineBasicString() : try parseBasicString())
    case UInt8(ascii: "'"):
      value = .string(isAt("'''") ? try parseMultiLineLiteralString() : try parseLiteralString())
    case UInt8(ascii: "t"), UInt8(ascii: "f"):
      value = .boolean(try parseBoolean())
    case UInt8(ascii: "["):
      value = .array(try parseArray(depth: depth + 1))
    case UInt8(ascii: "{"):
      value = .table(try parseInlineTable(depth: depth + 1))
    case UInt8(ascii: "0")...UInt8(ascii: "9") where startsDateOrTime:
      value = .dateTime(try parseDateTime())
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"),
      UInt8(ascii: "i"), UInt8(ascii: "n"):
      value = try parseNumber()
    default:
      throw expected(
        "a value (a string, number, boolean, date-time, array or inline table)")
    }
    return TOMLNode(value, at: start)
  }

  private mutating func parseBoolean() throws(TOMLError) -> Bool {
    if isAt("true") {
      index += 4
      return true
    }
    if isAt("false") {
      index += 5
      return false
    }
    throw expected("a value (true, false, a string, number, date-time, array or inline table)")
  }

  private func checkDepth(_ depth: Int) throws(TOMLError) {
    guard depth <= Self.maximumDepth else {
      throw error("tables and arrays nested more than \(Self.maximumDepth) deep")
    }
  }

  /// `[ value, value, ]`: newlines and comments allowed between elements, a trailing comma too.
  private mutating func parseArray(depth: Int) throws(TOMLError) -> [TOMLNode] {
    try checkDepth(depth)
    index += 1
    var elements: [TOMLNode] = []
    elements.reserveCapacity(4)
    while true {
      try skipBlanksCommentsAndNewlines()
      if current == UInt8(ascii: "]") {
        index += 1
        return elements
      }
      elements.append(try parseValue(depth: depth))
      try skipBlanksCommentsAndNewlines()
      switch current {
      case UInt8(ascii: ",")?:
        index += 1
      case UInt8(ascii: "]")?:
        index += 1
        return elements
      default:
        throw expected("',' or ']' after an array element")
      }
    }
  }

  /// `{ key = value, … }` on one line, no trailing comma; immutable once closed. Plain keys
  /// go straight into the table; a dotted key hands it over to a `TableBuilder`.
  private mutating func parseInlineTable(depth: Int) throws(TOMLError) -> TOMLTable {
    try checkDepth(depth)
    let position = markPosition()
    index += 1
    skipBlanks()
    if current == UInt8(ascii: "}") {
      index += 1
      return TOMLTable(position: position)
    }
    var table = TOMLTable(position: position)
    var builder: TableBuilder?
    while true {
      let key = try parseKeyAndEquals()
      if builder == nil, key.count == 1 {
        let node = try parseValue(depth: depth)
        if let first = table.entry(key.first.name) {
          throw duplicate(key, first: first.keyPosition)
        }
        table.append(key.first.name, at: key.first.position, node)
      } else {
        let target = builder ?? TableBuilder(continuing: table, depth: depth)
        builder = target
        try parseKeyValue(key, into: target)
      }
      skipBlanks()
      switch current {
      case UInt8(ascii: ",")?:
        index += 1
        skipBlanks()
        if current == UInt8(ascii: "}") {
          throw error("an inline table may not end with a trailing comma")
        }
      case UInt8(ascii: "}")?:
        index += 1
        return builder?.build() ?? table
      default:
        throw expected("',' or '}' after a key/value pair of an inline table (on one line)")
      }
    }
  }
}
