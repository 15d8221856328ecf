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

  /// One key, in the order keys were first written.
  struct Entry {
    let key: String
    let keyPosition: TOMLPosition
    let item: Item
  }

  var origin: Origin
  /// Where the table was defined: its header once it has one, else where it was first implied.
  var position: TOMLPosition
  /// How many tables enclose this one (the document is 0).
  let depth: Int
  private var entries: [Entry] = []
  /// Where each key is in `entries`, once there are too many for a linear search.
  private var index: [String: Int]?

  init(origin: Origin, position: TOMLPosition, depth: Int) {
    self.origin = origin
    self.position = position
    self.depth = depth
    entries.reserveCapacity(Self.initialCapacity)
  }

  /// A table defined at `position` holding the values of `entries`.
  convenience init(defined position: TOMLPosition, depth: Int, entries: [TOMLTable.Entry]) {
    self.init(origin: .defined, position: position, depth: depth)
    for entry in entries { insert(entry.key, .value(entry.node), at: entry.keyPosition) }
  }

  /// Room for the keys of a typical table (a job has about ten) without growing the array
  /// key by key; the builder lives only while the document is read.
  private static let initialCapacity = 16

  subscript(key: String) -> (item: Item, keyPosition: TOMLPosition)? {
    if let index {
      return index[key].map { (entries[$0].item, entries[$0].keyPosition) }
    }
    for entry in entries where entry.key == key { return (entry.item, entry.keyPosition) }
    return nil
  }

  /// Adds `key`, which must not be present yet.
  func insert(_ key: String, _ item: Item, at keyPosition: TOMLPosition) {
    entries.append(Entry(key: key, keyPosition: keyPosition, item: item))
    if index != nil {
      index?[key] = entries.count - 1
    } else if entries.count > TOMLTable.linearSearchLimit {
      index = TOMLTable.makeIndex(entries.lazy.map(\.key))
    }
  }

  /// The finished table.
  func build() -> TOMLTable {
    var built: [TOMLTable.Entry] = []
    built.reserveCapacity(entries.count)
    for entry in entries {
      let node: TOMLNode
      switch entry.item {
      case .value(let value):
        node = value
      case .table(let inner):
        node = TOMLNode(.table(inner.build()), at: inner.position)
      case .tableArray(let array):
        let elements = array.tables.map { TOMLNode(.table($0.build()), at: $0.position) }
        node = TOMLNode(.array(elements), at: array.position)
      }
      built.append(TOMLTable.Entry(key: entry.key, keyPosition: entry.keyPosition, node: node))
    }
    return TOMLTable(position: position, entries: built, index: index)
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
