/// Reads a TOML 1.0 document byte by byte. Every problem becomes a `TOMLError` naming the line
/// and column; nesting is limited so that no input can exhaust the stack.
struct Parser {
  /// How deeply tables (headers, dotted keys, inline tables) and arrays may nest, counted
  /// together: the parser and everything walking its result recurse that deep at most.
  static let maximumDepth = 128

  /// The document; valid while the parser is (see `TOMLTable.init(parsing:)`).
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0
  /// 1-based number of the line `index` is on.
  var line = 1
  /// Offset of the first byte of that line.
  var lineStart = 0
  /// The last offset `markPosition` was asked for and its column.
  private var columnMark = (offset: 0, column: 1)
  let root: TableBuilder
  /// The table the last header opened (the document before any header).
  var section: TableBuilder

  init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
    root = TableBuilder(origin: .defined, position: TOMLPosition(line: 1, column: 1), depth: 0)
    section = root
  }

  // MARK: - Cursor

  var atEnd: Bool { index >= bytes.count }

  /// The byte at `index`, or nil at the end.
  var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  /// The byte `offset` bytes ahead of `index`, or nil past the end.
  func peek(_ offset: Int) -> UInt8? {
    index + offset < bytes.count ? bytes[index + offset] : nil
  }

  func isAt(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    let pointer = text.utf8Start
    for offset in 0..<count where bytes[index + offset] != pointer[offset] { return false }
    return true
  }

  /// Where `index` is (for errors: counts the line's characters from its start).
  var position: TOMLPosition { position(of: index) }

  /// Where `index` is, counting on from the last position taken on the same line, so that
  /// recording every key and value of a long line stays linear in its length.
  mutating func markPosition() -> TOMLPosition {
    var (cursor, column) = columnMark
    if cursor < lineStart || cursor > index { (cursor, column) = (lineStart, 1) }
    while cursor < index {
      if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
      cursor += 1
    }
    columnMark = (index, column)
    return TOMLPosition(line: line, column: column)
  }

  /// The position of byte `offset`, which must be on the current line.
  func position(of offset: Int) -> TOMLPosition {
    var column = 1
    var cursor = lineStart
    while cursor < offset {
      if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
      cursor += 1
    }
    return TOMLPosition(line: line, column: column)
  }

  func error(_ message: String) -> TOMLError {
    TOMLError(position: position, message: message)
  }

  func error(_ message: String, at position: TOMLPosition) -> TOMLError {
    TOMLError(position: position, message: message)
  }

  /// `expected …, found …` at the current byte.
  func expected(_ what: String) -> TOMLError {
    error("expected \(what), found \(found)")
  }

  /// The current byte in words, for messages.
  var found: String {
    guard let byte = current else { return "the end of the document" }
    switch byte {
    case UInt8(ascii: "\n"): return "the end of the line"
    case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"): return "the end of the line"
    case UInt8(ascii: " "), UInt8(ascii: "\t"): return "whitespace"
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
    case 0..<0x20, 0x7F: return "control character \(Self.codePoint(UInt32(byte)))"
    default:
      guard let length = utf8SequenceLength(at: index) else {
        return "the byte 0x\(String(byte, radix: 16, uppercase: true)), which is not UTF-8"
      }
      let text = String(decoding: bytes[index..<index + length], as: UTF8.self)
      return "'\(text)' (\(Self.codePoint(text.unicodeScalars.first?.value ?? 0)))"
    }
  }

  /// `U+0007`.
  static func codePoint(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  // MARK: - Whitespace, newlines, comments

  static func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
  }

  static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  /// Control characters TOML forbids outside of escapes: U+0000–U+001F but tab, and U+007F.
  static func isControl(_ byte: UInt8) -> Bool {
    (byte < 0x20 && byte != UInt8(ascii: "\t")) || byte == 0x7F
  }

  mutating func skipBlanks() {
    while let byte = current, Self.isBlank(byte) { index += 1 }
  }

  /// Whether a newline (LF or CRLF) starts at `index`.
  var atNewline: Bool {
    current == UInt8(ascii: "\n")
      || (current == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n"))
  }

  /// Consumes the newline at `index` (see `atNewline`).
  mutating func consumeNewline() {
    index += current == UInt8(ascii: "\r") ? 2 : 1
    line += 1
    lineStart = index
  }

  /// Skips a comment starting at `index` (at `#`) up to, not including, the end of its line.
  mutating func skipComment() throws(TOMLError) {
    index += 1
    while true {
      skipPlainRun(until: nil, escapes: false)
      guard let byte = current, byte != UInt8(ascii: "\n") else { return }
      if byte == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") { return }
      if Self.isControl(byte) {
        throw error("control character \(Self.codePoint(UInt32(byte))) is not allowed in a comment")
      }
      index += try byteCount(at: index)
    }
  }

  /// Skips blanks, comments and newlines (between array elements).
  mutating func skipBlanksCommentsAndNewlines() throws(TOMLError) {
    while let byte = current {
      if Self.isBlank(byte) {
        index += 1
      } else if atNewline {
        consumeNewline()
      } else if byte == UInt8(ascii: "#") {
        try skipComment()
      } else {
        return
      }
    }
  }

  /// After a key/value pair or a header: blanks, an optional comment, then a newline or the end.
  mutating func expectEndOfLine(after what: String) throws(TOMLError) {
    skipBlanks()
    if current == UInt8(ascii: "#") { try skipComment() }
    if atEnd { return }
    guard atNewline else { throw expected("a new line after \(what)") }
    consumeNewline()
  }

  // MARK: - UTF-8

  /// The bytes in `range`, as a buffer (slices of the buffer go through generic code).
  func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: bytes[range])
  }

  /// The text of the bytes in `range`, which are valid UTF-8.
  func string(in range: Range<Int>) -> String { String(decoding: slice(range), as: UTF8.self) }

  /// Moves `index` past the bytes that text (a string's or a comment's) takes as they are:
  /// printable ASCII, tab and valid multi-byte UTF-8, up to `quote`, a backslash when
  /// `escapes`, a newline, a control character or invalid UTF-8, which the caller handles.
  mutating func skipPlainRun(until quote: UInt8?, escapes: Bool) {
    while index < bytes.count {
      let byte = bytes[index]
      if (byte >= 0x20 && byte < 0x7F) || byte == UInt8(ascii: "\t") {
        if byte == quote || (escapes && byte == UInt8(ascii: "\\")) { return }
        index += 1
      } else if byte >= 0x80, let length = utf8SequenceLength(at: index) {
        index += length
      } else {
        return
      }
    }
  }

  /// The length of the valid UTF-8 sequence at `offset`, or nil when it is not valid UTF-8
  /// (bad lead byte, missing continuation, overlong form, surrogate or beyond U+10FFFF).
  func utf8SequenceLength(at offset: Int) -> Int? {
    let lead = bytes[offset]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0..<0x80: return 1
    case 0xC2...0xDF: length = 2
    case 0xE0:
      length = 3
      low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED:
      length = 3
      high = 0x9F
    case 0xF0:
      length = 4
      low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4:
      length = 4
      high = 0x8F
    default: return nil
    }
    guard offset + length <= bytes.count else { return nil }
    guard (low...high).contains(bytes[offset + 1]) else { return nil }
    for next in offset + 2..<offset + length where bytes[next] & 0xC0 != 0x80 { return nil }
    return length
  }

  /// The length of the character at `offset`, throwing when it is not valid UTF-8.
  func byteCount(at offset: Int) throws(TOMLError) -> Int {
    if bytes[offset] < 0x80 { return 1 }
    guard let length = utf8SequenceLength(at: offset) else {
      throw error(
        "invalid UTF-8 (byte 0x\(String(bytes[offset], radix: 16, uppercase: true)))",
        at: position(of: offset))
    }
    return length
  }
}
