/// A TOML table: keys in the order they were first written, each with where it was written.
/// Two tables are equal when they have the same keys with equal values, in any order.
public struct TOMLTable: Sendable, Equatable {
  /// One key of a table.
  public struct Entry: Sendable {
    /// The key (one part of a dotted key: `b` for `a.b = 1` inside table `a`).
    public var key: String
    /// Where the key was written; for a table defined by a header, the header.
    public var keyPosition: TOMLPosition
    /// The value and where it starts.
    public var node: TOMLNode
  }

  /// The keys in the order they were first written.
  public private(set) var entries: [Entry] = []
  /// Where the table was defined: its header, its `{`, or the first key that implied it.
  public var position: TOMLPosition
  /// Index of each key in `entries`; built only for tables big enough to need it.
  private var index: [String: Int]?

  /// An empty table defined at `position`.
  public init(position: TOMLPosition) {
    self.position = position
  }

  /// Parses a whole TOML 1.0 document.
  public init(parsing text: String) throws(TOMLError) {
    self = try TOMLTable(parsing: Array(text.utf8))
  }

  /// Parses a whole TOML 1.0 document given as bytes, which must be UTF-8.
  public init(parsing bytes: [UInt8]) throws(TOMLError) {
    var parser = Parser(bytes: bytes)
    self = try parser.parseDocument()
  }

  /// The keys in the order they were first written.
  public var keys: [String] { entries.map(\.key) }

  /// The number of keys.
  public var count: Int { entries.count }

  /// The value of `key`, or nil when absent.
  public subscript(key: String) -> TOMLValue? { entry(key)?.node.value }

  /// The entry of `key`, or nil when absent.
  public func entry(_ key: String) -> Entry? {
    if let index { return index[key].map { entries[$0] } }
    return entries.first { $0.key == key }
  }

  /// Adds `key`, which must not be present yet.
  mutating func append(_ key: String, at keyPosition: TOMLPosition, _ node: TOMLNode) {
    entries.append(Entry(key: key, keyPosition: keyPosition, node: node))
    if index != nil {
      index?[key] = entries.count - 1
    } else if entries.count > Self.linearSearchLimit {
      index = Dictionary(
        uniqueKeysWithValues: entries.enumerated().map { ($0.element.key, $0.offset) })
    }
  }

  /// Up to this many keys a linear search beats hashing.
  private static let linearSearchLimit = 8

  public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
    lhs.count == rhs.count
      && lhs.entries.allSatisfy { entry in rhs.entry(entry.key)?.node == entry.node }
  }
}
