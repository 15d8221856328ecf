/// A table while the document is being read: it still accepts keys, and remembers how it was
/// defined so that the redefinition rules of TOML 1.0 can be enforced.
final class TableBuilder {
  /// How a table came to exist.
  enum Origin {
    /// Named as the parent of a header (`a` in `[a.b]`): a later `[a]` may still define it.
    case implicit
    /// Defined by its own `[header]`, as an `[[array]]` element, or as an inline table's root.
    case defined
    /// Created or extended by dotted keys (`a.b = 1`): no header may define it afterwards.
    case dotted
  }

  /// What a key holds while the document is being read.
  enum Item {
    case value(TOMLNode)
    case table(TableBuilder)
    case tableArray(TableArrayBuilder)
  }

  var origin: Origin
  /// Where the table was defined: its header once it has one, else where it was first implied.
  var position: TOMLPosition
  /// How many tables enclose this one (the document is 0).
  let depth: Int
  private(set) var keys: [String] = []
  private var items: [String: (item: Item, keyPosition: TOMLPosition)] = [:]

  init(origin: Origin, position: TOMLPosition, depth: Int) {
    self.origin = origin
    self.position = position
    self.depth = depth
  }

  subscript(key: String) -> (item: Item, keyPosition: TOMLPosition)? { items[key] }

  func insert(_ key: String, _ item: Item, at keyPosition: TOMLPosition) {
    keys.append(key)
    items[key] = (item, keyPosition)
  }

  /// The finished table.
  func build() -> TOMLTable {
    var table = TOMLTable(position: position)
    for key in keys {
      guard let (item, keyPosition) = items[key] else { continue }
      switch item {
      case .value(let node):
        table.append(key, at: keyPosition, node)
      case .table(let inner):
        table.append(key, at: keyPosition, TOMLNode(.table(inner.build()), at: inner.position))
      case .tableArray(let array):
        let elements = array.tables.map { TOMLNode(.table($0.build()), at: $0.position) }
        table.append(key, at: keyPosition, TOMLNode(.array(elements), at: array.position))
      }
    }
    return table
  }
}

/// An array of tables (`[[name]]`) while the document is being read.
final class TableArrayBuilder {
  let position: TOMLPosition
  private(set) var tables: [TableBuilder] = []

  init(position: TOMLPosition) {
    self.position = position
  }

  func append(_ table: TableBuilder) { tables.append(table) }
}
