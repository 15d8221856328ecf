/// Statements: headers, key/value pairs, and the rules that say which tables they may define.
extension Parser {
  /// One part of a dotted key and where it was written.
  struct KeyPart {
    var name: String
    var position: TOMLPosition
  }

  /// A key's parts; most keys have one, which then needs no array.
  struct Key: RandomAccessCollection {
    var first: KeyPart
    var rest: [KeyPart] = []

    var startIndex: Int { 0 }
    var endIndex: Int { rest.count + 1 }
    subscript(position: Int) -> KeyPart { position == 0 ? first : rest[position - 1] }
  }

  mutating func parseDocument() throws(TOMLError) -> TOMLTable {
    while let byte = current {
      if Self.isBlank(byte) {
        index += 1
      } else if atNewline {
        consumeNewline()
      } else if byte == UInt8(ascii: "#") {
        try skipComment()
      } else if byte == UInt8(ascii: "[") {
        try parseHeader()
      } else {
        try parseKeyValue(into: section)
        try expectEndOfLine(after: "a key/value pair")
      }
    }
    return root.build()
  }

  // MARK: - Headers

  /// `[a.b]` or `[[a.b]]`, then the end of the line.
  private mutating func parseHeader() throws(TOMLError) {
    let start = markPosition()
    let isArray = peek(1) == UInt8(ascii: "[")
    index += isArray ? 2 : 1
    skipBlanks()
    guard let byte = current, Self.startsKey(byte) else {
      throw error(
        "a table header must start with a key (a letter, digit, '-', '_' or a quoted key) "
          + "after its '[' or '[['")
    }
    let key = try parseKey()
    if isArray {
      guard isAt("]]") else { throw expected("']]' to close the array-of-tables header") }
      index += 2
      section = try appendArrayElement(key, at: start)
    } else {
      guard current == UInt8(ascii: "]") else { throw expected("']' to close the table header") }
      index += 1
      section = try defineTable(key, at: start)
    }
    try expectEndOfLine(after: "a table header")
  }

  /// The table `[key]` names, defined now.
  private func defineTable(_ key: Key, at start: TOMLPosition) throws(TOMLError)
    -> TableBuilder
  {
    let parent = try headerParent(key, at: start)
    let last = key[key.count - 1]
    guard let (item, keyPosition) = parent[last.name] else {
      return try newTable(last, in: parent, origin: .defined, at: start)
    }
    let name = Self.dotted(key)
    switch item {
    case .table(let table) where table.origin == .implicit:
      table.origin = .defined
      table.position = start
      return table
    case .table(let table) where table.origin == .dotted:
      throw error(
        "table [\(name)] was already defined with dotted keys (line \(keyPosition.line))",
        at: start)
    case .table:
      throw error("table [\(name)] is defined twice (first at line \(keyPosition.line))", at: start)
    case .tableArray:
      throw error(
        "[\(name)] is already an array of tables (line \(keyPosition.line)); use [[\(name)]]",
        at: start)
    case .value(let node):
      throw error(
        "\(name) is already \(Self.describe(node.value)) (line \(keyPosition.line)), not a "
          + "table", at: start)
    }
  }

  /// A new element of the array of tables `[[key]]`.
  private func appendArrayElement(_ key: Key, at start: TOMLPosition) throws(TOMLError)
    -> TableBuilder
  {
    let parent = try headerParent(key, at: start)
    let last = key[key.count - 1]
    let element = try newTable(nil, in: parent, origin: .defined, at: start)
    guard let (item, keyPosition) = parent[last.name] else {
      let array = TableArrayBuilder(position: start)
      array.append(element)
      parent.insert(last.name, .tableArray(array), at: start)
      return element
    }
    guard case .tableArray(let array) = item else {
      let what: String
      if case .value(let node) = item { what = Self.describe(node.value) } else { what = "a table" }
      throw error(
        "cannot define [[\(Self.dotted(key))]]: it is already \(what) (line \(keyPosition.line))",
        at: start)
    }
    array.append(element)
    return element
  }

  /// The table a header's last key part goes into, creating implicit tables on the way. A
  /// header may pass through any table, and through an array of tables to its last element.
  private func headerParent(_ key: Key, at start: TOMLPosition) throws(TOMLError)
    -> TableBuilder
  {
    var table = root
    // Indices, not `enumerated()`: the first use of that generic iterator's metadata is a
    // runtime scan of every conformance in the binary, 7 % of a one-shot `status --json`.
    for offset in key.indices.dropLast() {
      let part = key[offset]
      switch table[part.name]?.item {
      case nil:
        table = try newTable(part, in: table, origin: .implicit, at: part.position)
      case .table(let inner):
        table = inner
      case .tableArray(let array):
        table = array.tables[array.tables.count - 1]
      case .value(let node):
        let name = Self.dotted(key[...offset])
        throw error(
          "\(name) is already \(Self.describe(node.value)) (line \(node.position.line)), "
            + "so [\(Self.dotted(key))] cannot be defined inside it",
          at: start)
      }
    }
    return table
  }

  /// A new empty table under `part` in `parent` (or, for `part` nil, one not inserted yet).
  private func newTable(
    _ part: KeyPart?, in parent: TableBuilder, origin: TableBuilder.Origin,
    at position: TOMLPosition
  ) throws(TOMLError) -> TableBuilder {
    guard parent.depth < Self.maximumDepth else {
      throw error("tables and arrays nested more than \(Self.maximumDepth) deep", at: position)
    }
    let table = TableBuilder(origin: origin, position: position, depth: parent.depth + 1)
    if let part { parent.insert(part.name, .table(table), at: part.position) }
    return table
  }

  // MARK: - Key/value pairs

  /// `key = value` into `table`: dotted keys create or extend tables, never ones a header
  /// defined, and a key is set once.
  mutating func parseKeyValue(into table: TableBuilder) throws(TOMLError) {
    try parseKeyValue(try parseKeyAndEquals(), into: table)
  }

  /// The key of a key/value pair, its `=` and the blanks after it.
  mutating func parseKeyAndEquals() throws(TOMLError) -> Key {
    guard let byte = current, Self.startsKey(byte) else {
      throw expected("a key (a letter, digit, '-', '_' or a quoted key)")
    }
    let key = try parseKey()
    guard current == UInt8(ascii: "=") else { throw expected("'=' after the key") }
    index += 1
    skipBlanks()
    return key
  }

  /// The value of `key` (read up to its `=`) into `table`.
  mutating func parseKeyValue(_ key: Key, into table: TableBuilder) throws(TOMLError) {
    let node = try parseValue(depth: table.depth + key.count - 1)
    var target = table
    for offset in key.indices.dropLast() {  // not `enumerated()`: see `headerParent`
      let part = key[offset]
      switch target[part.name]?.item {
      case nil:
        target = try newTable(part, in: target, origin: .dotted, at: part.position)
      case .table(let inner) where inner.origin != .defined:
        inner.origin = .dotted
        target = inner
      case .table(let inner):
        throw error(
          "cannot add to table \(Self.dotted(key[...offset])) with a dotted key: it was defined "
            + "by its header at line \(inner.position.line)", at: part.position)
      case .tableArray(let array):
        throw error(
          "cannot add to \(Self.dotted(key[...offset])) with a dotted key: it is an array of "
            + "tables (line \(array.position.line))", at: part.position)
      case .value(let existing):
        throw error(
          "\(Self.dotted(key[...offset])) is already \(Self.describe(existing.value)) "
            + "(line \(existing.position.line)), which cannot be extended with dotted keys",
          at: part.position)
      }
    }
    let last = key[key.count - 1]
    if let (_, keyPosition) = target[last.name] {
      throw duplicate(key, first: keyPosition)
    }
    target.insert(last.name, .value(node), at: last.position)
  }

  func duplicate(_ key: Key, first: TOMLPosition) -> TOMLError {
    error(
      "key \(Self.dotted(key)) is defined twice (first at line \(first.line))",
      at: key[key.count - 1].position)
  }

  /// `an integer`, `an inline table`, for messages about a value already there.
  static func describe(_ value: TOMLValue) -> String {
    if value.table != nil { return "an inline table" }
    let name = value.typeName
    return (["a", "i", "o"].contains(name.first) ? "an " : "a ") + name
  }

  // MARK: - Keys

  static func startsKey(_ byte: UInt8) -> Bool {
    isBareKeyByte(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
  }

  static func isBareKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
      true
    default: false
    }
  }

  /// A bare, quoted or dotted key, and the blanks after it.
  mutating func parseKey() throws(TOMLError) -> Key {
    var key = Key(first: try parseKeyPart())
    while true {
      skipBlanks()
      guard current == UInt8(ascii: ".") else { return key }
      index += 1
      skipBlanks()
      let part = try parseKeyPart()
      key.rest.append(part)
      guard key.count <= Self.maximumDepth else {
        throw error("a key has more than \(Self.maximumDepth) dotted parts", at: part.position)
      }
    }
  }

  /// One bare or quoted part of a key.
  private mutating func parseKeyPart() throws(TOMLError) -> KeyPart {
    let start = markPosition()
    let name: String
    switch current {
    case UInt8(ascii: "\"")?:
      name = try parseBasicString()
    case UInt8(ascii: "'")?:
      name = try parseLiteralString()
    case let byte? where Self.isBareKeyByte(byte):
      let first = index
      while let byte = current, Self.isBareKeyByte(byte) { index += 1 }
      name = string(in: first..<index)
    default:
      throw expected("a key after '.'")
    }
    return KeyPart(name: name, position: start)
  }

  /// `a.b."c d"` for messages.
  static func dotted(_ key: some Collection<KeyPart>) -> String {
    key.map { part in
      part.name.utf8.allSatisfy(isBareKeyByte) && !part.name.isEmpty
        ? part.name : "\"\(part.name)\""
    }.joined(separator: ".")
  }
}
