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
    self = try bytes.withUnsafeBufferPointer { buffer throws(TOMLError) in
      var parser = Parser(bytes: buffer)
      return try parser.parseDocument()
    }
  }

  /// The keys in the order they were first written.
  public var keys: [String] { entries.map(\.key) }

  /// The number of keys.
  public var count: Int { entries.count }

  /// The value of `key`, or nil when absent.
  public subscript(key: String) -> TOMLValue? { offset(of: key).map { entries[$0].node.value } }

  /// The entry of `key`, or nil when absent.
  public func entry(_ key: String) -> Entry? {
    offset(of: key).map { entries[$0] }
  }

  /// Where `key` is in `entries`, or nil when absent.
  func offset(of key: String) -> Int? {
    if let index { return index[key] }
    // By index, so that only the key is read, not a copy of each entry made; lengths first,
    // as most keys differ in length and that test is inlined where `==` is a call.
    let length = key.utf8.count
    for offset in entries.indices {
      let candidate = entries[offset].key
      if candidate.utf8.count == length && candidate == key { return offset }
    }
    return nil
  }

  /// Adds `key`, which must not be present yet.
  mutating func append(_ key: String, at keyPosition: TOMLPosition, _ node: TOMLNode) {
    entries.append(Entry(key: key, keyPosition: keyPosition, node: node))
    if index != nil {
      index?[key] = entries.count - 1
    } else if entries.count > Self.linearSearchLimit {
      index = Self.makeIndex(entries.lazy.map(\.key))
    }
  }

  /// Makes room for `count` entries.
  mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

  /// Replaces the value of the entry at `offset`.
  mutating func setNode(at offset: Int, _ node: TOMLNode) {
    entries[offset].node = node
  }

  /// Up to this many keys a linear search beats hashing (short keys compare in a few
  /// instructions; a job has 10–15).
  static let linearSearchLimit = 16

  /// The position of each of `keys`, which are distinct.
  static func makeIndex(_ keys: some Collection<String>) -> [String: Int] {
    var index: [String: Int] = [:]
    index.reserveCapacity(keys.count * 2)
    for (offset, key) in keys.enumerated() { index[key] = offset }
    return index
  }

  public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
    lhs.count == rhs.count
      && lhs.entries.allSatisfy { entry in rhs.entry(entry.key)?.node == entry.node }
  }
}
