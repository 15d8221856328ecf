/// Writes compact JSON into a reusable byte buffer, byte for byte as `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes it (see ``Output/json(_:)``): strings escape
/// `"`, `\` and the control characters below U+0020 (`\b \f \n \r \t`, else `\u00XX` in lower-case
/// hex) and nothing else. The caller writes the keys of an object in sorted (UTF-8 byte) order.
///
/// Commas are inserted automatically: before a key, and before a value or container that follows
/// another value in an array.
struct JSONLineWriter {
  /// The JSON written so far.
  private(set) var bytes: [UInt8] = []
  private var needsComma = false

  /// Empties the buffer, keeping its capacity.
  mutating func reset() {
    bytes.removeAll(keepingCapacity: true)
    needsComma = false
  }

  mutating func beginObject() { open(UInt8(ascii: "{")) }

  mutating func endObject() { close(UInt8(ascii: "}")) }

  mutating func beginArray() { open(UInt8(ascii: "[")) }

  mutating func endArray() { close(UInt8(ascii: "]")) }

  /// `"name":` (the key of the next value); `name` must need no escaping.
  mutating func key(_ name: StaticString) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    append(name)
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  mutating func string(_ text: String) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
      case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
      case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
      case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
      case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
      case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
      case 0..<0x20:
        bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")]
        bytes += [Self.hexDigit(byte >> 4), Self.hexDigit(byte & 0xF)]
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  mutating func optionalString(_ text: String?) {
    if let text { string(text) } else { null() }
  }

  mutating func bool(_ value: Bool) {
    separate()
    append(value ? "true" : "false")
    needsComma = true
  }

  mutating func int(_ value: Int) {
    separate()
    bytes.appendDecimal(value)
    needsComma = true
  }

  mutating func null() {
    separate()
    append("null")
    needsComma = true
  }

  /// A complete JSON value written elsewhere (for example by `JSONEncoder`).
  mutating func raw(_ value: [UInt8]) {
    separate()
    bytes += value
    needsComma = true
  }

  /// A string value whose text is written by `body` straight into the buffer; `body` must write
  /// only bytes that need no escaping (digits, letters, `-:.`).
  mutating func unescapedString(_ body: (inout [UInt8]) -> Void) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    body(&bytes)
    bytes.append(UInt8(ascii: "\""))
    needsComma = true
  }

  /// Ends the line (after its top-level value).
  mutating func newline() {
    bytes.append(UInt8(ascii: "\n"))
    needsComma = false
  }

  private mutating func open(_ bracket: UInt8) {
    separate()
    bytes.append(bracket)
    needsComma = false
  }

  private mutating func close(_ bracket: UInt8) {
    bytes.append(bracket)
    needsComma = true
  }

  private mutating func append(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// Writes the comma that goes before a key or an array element following another value.
  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
  }
}
