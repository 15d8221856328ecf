/// JSON text appended directly, formatted exactly as `Output.json`'s `JSONEncoder` formats it
/// (`.sortedKeys`, `.withoutEscapingSlashes`, no whitespace): the caller writes keys in sorted
/// order. For documents too large to go through `JSONEncoder` quickly (`status` with thousands
/// of tasks); `TaskListJSONTests` holds the two to the same bytes.
struct JSONText {
  private(set) var bytes: [UInt8] = []

  /// An empty text with room for `capacity` bytes.
  init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  /// Appends text that is already JSON.
  mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

  mutating func raw(_ character: Unicode.Scalar) { bytes.append(UInt8(ascii: character)) }

  /// `"key":`, after a `,` unless it is the object's first key.
  mutating func key(_ name: StaticString, first: Bool = false) {
    if !first { raw(",") }
    raw("\"")
    name.withUTF8Buffer { bytes.append(contentsOf: $0) }
    raw("\":")
  }

  mutating func string(_ text: String) {
    raw("\"")
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): raw("\\\"")
      case UInt8(ascii: "\\"): raw("\\\\")
      case 0x08: raw("\\b")
      case 0x0C: raw("\\f")
      case UInt8(ascii: "\n"): raw("\\n")
      case UInt8(ascii: "\r"): raw("\\r")
      case UInt8(ascii: "\t"): raw("\\t")
      case 0x00..<0x20:
        raw("\\u00")
        bytes.append(Self.hexDigits[Int(byte >> 4)])
        bytes.append(Self.hexDigits[Int(byte & 0x0F)])
      default: bytes.append(byte)
      }
    }
    raw("\"")
  }

  mutating func string(_ text: String?) {
    if let text { string(text) } else { null() }
  }

  mutating func int(_ value: Int) { raw(String(value)) }

  mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

  mutating func null() { raw("null") }

  /// `[element,element,...]`.
  mutating func array<Element>(_ elements: [Element], _ write: (Element, inout JSONText) -> Void) {
    raw("[")
    for (index, element) in elements.enumerated() {
      if index > 0 { raw(",") }
      write(element, &self)
    }
    raw("]")
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)
}
