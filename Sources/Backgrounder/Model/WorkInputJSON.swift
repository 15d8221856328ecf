import Foundation

/// Reads the one shape ``WorkInput/serialized()`` writes — `{"values":{"key":{"case":{"_0":
/// value}},…}}` — without `JSONDecoder`: every run decodes its stored input, and the decoder's
/// keyed containers for the enum cases were 3 % of the daemon's CPU per run (issue #35). Anything
/// else (another shape, a duplicate key, invalid UTF-8, a lone surrogate, a number that does
/// not fit) returns nil, and the caller decodes with `JSONDecoder` as before, so the result is
/// always the decoder's (a test compares the two on random inputs).
enum WorkInputJSON {
  static func decode(_ data: Data) -> WorkInput? {
    data.withUnsafeBytes { raw in
      var parser = Parser(bytes: raw.bindMemory(to: UInt8.self))
      return parser.input()
    }
  }

  private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
      self.bytes = bytes
    }

    mutating func input() -> WorkInput? {
      guard take("{"), string() == "values", take(":"), take("{") else { return nil }
      var values: [String: WorkValue] = [:]
      if !take("}") {
        repeat {
          guard let key = string(), take(":"), let value = value(), values[key] == nil else {
            return nil
          }
          values[key] = value
        } while take(",")
        guard take("}") else { return nil }
      }
      guard take("}") else { return nil }
      skipSpace()
      return index == bytes.count ? WorkInput(values) : nil
    }

    /// `{"case":{"_0":value}}`.
    private mutating func value() -> WorkValue? {
      guard take("{"), let kind = string(), take(":"), take("{"), string() == "_0", take(":")
      else { return nil }
      let value: WorkValue
      switch kind {
      case "string":
        guard let text = string() else { return nil }
        value = .string(text)
      case "int":
        guard let number = number(), let integer = Int(number) else { return nil }
        value = .int(integer)
      case "double":
        guard let number = number(), let double = Double(number), double.isFinite else {
          return nil
        }
        value = .double(double)
      case "bool":
        if literal("true") {
          value = .bool(true)
        } else if literal("false") {
          value = .bool(false)
        } else {
          return nil
        }
      case "bytes":
        guard let text = string(), let data = Data(base64Encoded: text) else { return nil }
        value = .bytes(data)
      default:
        return nil
      }
      guard take("}"), take("}") else { return nil }
      return value
    }

    private mutating func skipSpace() {
      while index < bytes.count,
        bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
          || bytes[index] == 0x09
      {
        index += 1
      }
    }

    /// Skips white space, then takes `character` if it is next.
    private mutating func take(_ character: Unicode.Scalar) -> Bool {
      skipSpace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
      index += 1
      return true
    }

    private mutating func literal(_ word: StaticString) -> Bool {
      skipSpace()
      let count = word.utf8CodeUnitCount
      guard index + count <= bytes.count else { return false }
      for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
        return false
      }
      index += count
      return true
    }

    /// A JSON number's text (validated by the `Int`/`Double` parse after).
    private mutating func number() -> String? {
      skipSpace()
      let start = index
      while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
          UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
          index += 1
        default:
          return index > start
            ? String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            : nil
        }
      }
      return nil
    }

    /// A JSON string, unescaped; nil for invalid UTF-8, a raw control character, an unknown
    /// escape or a lone surrogate.
    private mutating func string() -> String? {
      guard take("\"") else { return nil }
      let start = index
      // Fast path: no escape.
      while index < bytes.count, bytes[index] != UInt8(ascii: "\""),
        bytes[index] != UInt8(ascii: "\\"),
        bytes[index] >= 0x20
      {
        index += 1
      }
      guard index < bytes.count else { return nil }
      if bytes[index] == UInt8(ascii: "\"") {
        let text = String(
          validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        index += 1
        return text
      }
      var unescaped = Array(bytes[start..<index])
      while index < bytes.count {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""):
          return String(validating: unescaped, as: UTF8.self)
        case UInt8(ascii: "\\"):
          guard index < bytes.count else { return nil }
          let escape = bytes[index]
          index += 1
          switch escape {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
          case UInt8(ascii: "b"): unescaped.append(0x08)
          case UInt8(ascii: "f"): unescaped.append(0x0C)
          case UInt8(ascii: "n"): unescaped.append(0x0A)
          case UInt8(ascii: "r"): unescaped.append(0x0D)
          case UInt8(ascii: "t"): unescaped.append(0x09)
          case UInt8(ascii: "u"):
            guard var scalar = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(scalar) {
              guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
              else { return nil }
              index += 2
              guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
              return nil
            }
            guard let character = Unicode.Scalar(scalar) else { return nil }
            unescaped.append(contentsOf: String(Character(character)).utf8)
          default:
            return nil
          }
        default:
          guard byte >= 0x20 else { return nil }
          unescaped.append(byte)
        }
      }
      return nil
    }

    private mutating func hex4() -> UInt32? {
      guard index + 4 <= bytes.count else { return nil }
      var value: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index]
        index += 1
        let digit: UInt32
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
        value = value << 4 | digit
      }
      return value
    }
  }
}
