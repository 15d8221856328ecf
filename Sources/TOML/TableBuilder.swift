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

  /// What a key whose value is still being read holds.
  enum Child {
    case table(TableBuilder)
    case tableArray(TableArrayBuilder)
  }

  var origin: Origin
  /// Where the table was defined: its header once it has one, else where it was first implied.
  var position: TOMLPosition
  /// How many tables enclose this one (the document is 0).
  let depth: Int
  // The builders' stored collections are exempt from dynamic exclusivity checks (a measurable
  // share of the parse): one parser on one thread touches them, never in overlapping accesses.

  /// The keys so far with their values; a key in `children` holds a placeholder until `build`.
  @exclusivity(unchecked) private var table: TOMLTable
  /// The tables and arrays of tables under this one, by the offset of their key in `table`.
  @exclusivity(unchecked) private var children: [Int: Child] = [:]

  init(origin: Origin, position: TOMLPosition, depth: Int) {
    self.origin = origin
    self.position = position
    self.depth = depth
    table = TOMLTable(position: position)
    table.reserveCapacity(Self.initialCapacity)
  }

  /// Room for a small table's keys; a bigger one (a job has up to about ten) doubles its room
  /// twice. Room for 16 cost 1.6 KB per table: 1,000 `[[job]]` tables faulted in 400 more pages.
  private static let initialCapacity = 4

  /// A defined table that goes on from `table` (which holds only values).
  init(continuing table: TOMLTable, depth: Int) {
    origin = .defined
    position = table.position
    self.depth = depth
    self.table = table
  }

  subscript(key: String) -> (item: Item, keyPosition: TOMLPosition)? {
    guard let offset = table.offset(of: key) else { return nil }
    let entry = table.entries[offset]
    switch children.isEmpty ? nil : children[offset] {
    case .table(let inner)?: return (.table(inner), entry.keyPosition)
    case .tableArray(let array)?: return (.tableArray(array), entry.keyPosition)
    case nil: return (.value(entry.node), entry.keyPosition)
    }
  }

  /// Adds `key`, which must not be present yet.
  func insert(_ key: String, _ item: Item, at keyPosition: TOMLPosition) {
    switch item {
    case .value(let node):
      table.append(key, at: keyPosition, node)
    case .table(let inner):
      children[table.count] = .table(inner)
      table.append(key, at: keyPosition, Self.placeholder)
    case .tableArray(let array):
      children[table.count] = .tableArray(array)
      table.append(key, at: keyPosition, Self.placeholder)
    }
  }

  /// What a key in `children` holds until `build` replaces it.
  private static let placeholder = TOMLNode(.boolean(false), at: TOMLPosition(line: 0, column: 0))

  /// The finished table. Called once: the builder hands its entries over.
  func build() -> TOMLTable {
    var result = TOMLTable(position: position)
    swap(&result, &table)
    result.position = position
    for (offset, child) in children {
      switch child {
      case .table(let inner):
        result.setNode(at: offset, TOMLNode(.table(inner.build()), at: inner.position))
      case .tableArray(let array):
        let elements = array.tables.map { TOMLNode(.table($0.build()), at: $0.position) }
        result.setNode(at: offset, TOMLNode(.array(elements), at: array.position))
      }
    }
    children = [:]
    return result
  }
}

/// An array of tables (`[[name]]`) while the document is being read.
final class TableArrayBuilder {
  let position: TOMLPosition
  @exclusivity(unchecked) private(set) var tables: [TableBuilder] = []

  init(position: TOMLPosition) {
    self.position = position
  }

  func append(_ table: TableBuilder) { tables.append(table) }
}
