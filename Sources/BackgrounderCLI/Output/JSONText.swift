import Backgrounder
import Foundation

/// JSON text appended directly, formatted exactly as `Output.json`'s `JSONEncoder` formats it
/// (`.sortedKeys`, `.withoutEscapingSlashes`, no whitespace): the caller writes keys in sorted
/// order. For documents too large to go through `JSONEncoder` quickly (`status` with thousands
/// of tasks); `TaskListJSONTests` holds the two to the same bytes. Strings that need no escaping
/// (nearly all: ids, states, times) are copied whole.
struct JSONText {
  private(set) var bytes: [UInt8] = []

  /// An empty text with room for `capacity` bytes.
  init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  /// Appends text that is already JSON.
  mutating func raw(_ text: String) { bytes += text.utf8 }

  /// Appends bytes that are already JSON.
  mutating func raw(bytes json: [UInt8]) { bytes += json }

  /// Appends one ASCII punctuation character (`{`, `,`, …).
  mutating func ascii(_ character: Unicode.Scalar) { bytes.append(UInt8(ascii: character)) }

  /// `"key":`, after a `,` unless it is the object's first key.
  mutating func key(_ name: StaticString, first: Bool = false) {
    if !first { ascii(",") }
    ascii("\"")
    name.withUTF8Buffer { bytes += $0 }
    ascii("\"")
    ascii(":")
  }

  mutating func string(_ text: String) {
    var text = text
    text.withUTF8 { utf8 in
      ascii("\"")
      if utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
        bytes += utf8
      } else {
        for byte in utf8 { escaped(byte) }
      }
      ascii("\"")
    }
  }

  mutating func string(_ text: String?) {
    if let text { string(text) } else { null() }
  }

  /// An ISO 8601 time as ``ISO8601/string(_:)`` writes it (no escaping needed).
  mutating func date(_ date: Date) {
    ascii("\"")
    ISO8601.append(date, to: &bytes)
    ascii("\"")
  }

  mutating func date(_ date: Date?) {
    if let date { self.date(date) } else { null() }
  }

  mutating func int(_ value: Int) { bytes.appendDecimal(value) }

  mutating func int(_ value: Int?) {
    if let value { int(value) } else { null() }
  }

  /// A finite number as `JSONEncoder` writes it: Swift's shortest round-trip form, without a
  /// trailing `.0` (`42.5`, `100`, `1e-07`).
  mutating func number(_ value: Double) {
    var text = value.description
    if text.hasSuffix(".0") { text.removeLast(2) }
    bytes += text.utf8
  }

  mutating func bool(_ value: Bool) {
    if value {
      bytes += [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")]
    } else {
      bytes += [
        UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"),
        UInt8(ascii: "e"),
      ]
    }
  }

  mutating func null() {
    bytes += [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")]
  }

  /// `[element,element,...]`.
  mutating func array<Element>(_ elements: [Element], _ write: (Element, inout JSONText) -> Void) {
    ascii("[")
    for (index, element) in elements.enumerated() {
      if index > 0 { ascii(",") }
      write(element, &self)
    }
    ascii("]")
  }

  /// One byte of a string that needs escaping somewhere.
  private mutating func escaped(_ byte: UInt8) {
    switch byte {
    case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), byte]
    case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
    case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
    case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
    case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
    case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
    case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
    case 0x00..<0x20:
      bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")]
      bytes.append(Self.hexDigits[Int(byte >> 4)])
      bytes.append(Self.hexDigits[Int(byte & 0x0F)])
    default: bytes.append(byte)
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)
}
