/// A JSON document, read by a small parser of its own: the exporter links no Foundation (its
/// `JSONDecoder` alone would double the exporter's size). Numbers keep their text, so that
/// nanosecond timestamps (beyond a `Double`'s 53 bits) read back exactly.
public enum JSONValue: Equatable, Sendable {
  case object([String: JSONValue])
  case array([JSONValue])
  case string(String)
  case number(String)
  case bool(Bool)
  case null

  /// Why a document could not be read: the byte offset and what was expected there.
  public struct SyntaxError: Error, CustomStringConvertible {
    public var offset: Int
    public var expected: String
    public var description: String { "invalid JSON at byte \(offset): expected \(expected)" }
  }

  /// Parses `bytes` (UTF-8) as one JSON value with nothing after it but white space.
  public init(parsing bytes: [UInt8]) throws(SyntaxError) {
    var parser = Parser(bytes: bytes)
    self = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.offset == bytes.count else { throw parser.error("the end of the document") }
  }

  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  public var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  public var array: [JSONValue]? {
    if case .array(let values) = self { return values }
    return nil
  }

  public var object: [String: JSONValue]? {
    if case .object(let members) = self { return members }
    return nil
  }

  public var double: Double? {
    if case .number(let text) = self { return Double(text) }
    return nil
  }

  /// A whole number (`1700000000123456789`, or `1.0e3`), exactly when it has no fraction.
  public var uint64: UInt64? {
    guard case .number(let text) = self else { return nil }
    if let value = UInt64(text) { return value }
    guard let value = Double(text), value >= 0, value < 0x1p64, value.rounded() == value else {
      return nil
    }
    return UInt64(value)
  }

  public var int: Int? {
    guard case .number(let text) = self else { return nil }
    if let value = Int(text) { return value }
    guard let value = Double(text), value.rounded() == value, abs(value) < 0x1p62 else {
      return nil
    }
    return Int(value)
  }

  private struct Parser {
    let bytes: [UInt8]
    var offset = 0

    func error(_ expected: String) -> SyntaxError {
      SyntaxError(offset: offset, expected: expected)
    }

    mutating func skipSpace() {
      while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func literal(_ word: String) -> Bool {
      let text = Array(word.utf8)
      guard bytes.count - offset >= text.count, Array(bytes[offset..<offset + text.count]) == text
      else { return false }
      offset += text.count
      return true
    }

    mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
      guard depth < 64 else { throw error("at most 64 nested values") }
      skipSpace()
      guard offset < bytes.count else { throw error("a value") }
      switch bytes[offset] {
      case UInt8(ascii: "{"):
        offset += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
          offset += 1
          return .object(members)
        }
        while true {
          skipSpace()
          let key = try string()
          skipSpace()
          guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw error(":") }
          offset += 1
          members[key] = try value(depth: depth + 1)
          skipSpace()
          guard offset < bytes.count else { throw error(", or }") }
          offset += 1
          if bytes[offset - 1] == UInt8(ascii: "}") { return .object(members) }
          guard bytes[offset - 1] == UInt8(ascii: ",") else {
            offset -= 1
            throw error(", or }")
          }
        }
      case UInt8(ascii: "["):
        offset += 1
        var values: [JSONValue] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
          offset += 1
          return .array(values)
        }
        while true {
          values.append(try value(depth: depth + 1))
          skipSpace()
          guard offset < bytes.count else { throw error(", or ]") }
          offset += 1
          if bytes[offset - 1] == UInt8(ascii: "]") { return .array(values) }
          guard bytes[offset - 1] == UInt8(ascii: ",") else {
            offset -= 1
            throw error(", or ]")
          }
        }
      case UInt8(ascii: "\""):
        return .string(try string())
      case UInt8(ascii: "t") where literal("true"): return .bool(true)
      case UInt8(ascii: "f") where literal("false"): return .bool(false)
      case UInt8(ascii: "n") where literal("null"): return .null
      default:
        let start = offset
        while offset < bytes.count,
          "0123456789+-.eE".utf8.contains(bytes[offset])
        {
          offset += 1
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard !text.isEmpty, Double(text) != nil else {
          offset = start
          throw error("a value")
        }
        return .number(text)
      }
    }

    mutating func string() throws(SyntaxError) -> String {
      guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw error("\"") }
      offset += 1
      var scalars = String.UnicodeScalarView()
      var run: [UInt8] = []
      func flush() {
        scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        run.removeAll(keepingCapacity: true)
      }
      while offset < bytes.count {
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""):
          flush()
          return String(scalars)
        case UInt8(ascii: "\\"):
          flush()
          guard offset < bytes.count else { throw error("an escape") }
          let escape = bytes[offset]
          offset += 1
          switch escape {
          case UInt8(ascii: "\""): scalars.append("\"")
          case UInt8(ascii: "\\"): scalars.append("\\")
          case UInt8(ascii: "/"): scalars.append("/")
          case UInt8(ascii: "b"): scalars.append("\u{08}")
          case UInt8(ascii: "f"): scalars.append("\u{0C}")
          case UInt8(ascii: "n"): scalars.append("\n")
          case UInt8(ascii: "r"): scalars.append("\r")
          case UInt8(ascii: "t"): scalars.append("\t")
          case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800..<0xDC00).contains(code), literal("\\u") {
              let low = try hex4()
              guard (0xDC00..<0xE000).contains(low) else { throw error("a low surrogate") }
              code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
          default:
            offset -= 1
            throw error("an escape")
          }
        case 0..<0x20:
          offset -= 1
          throw error("no control character in a string")
        default:
          run.append(byte)
        }
      }
      throw error("the end of the string")
    }

    mutating func hex4() throws(SyntaxError) -> UInt32 {
      guard bytes.count - offset >= 4,
        let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
      else { throw error("four hex digits") }
      offset += 4
      return value
    }
  }
}
