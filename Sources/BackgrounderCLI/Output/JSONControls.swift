/// JSON made safe to print. `JSONEncoder` (and ``JSONText``, which matches it byte for byte)
/// escape C0 controls only: DEL, the C1 controls (U+009B is an 8-bit CSI, which moves a
/// terminal's cursor as `ESC [` does) and bidirectional controls stay raw in valid JSON, and
/// reach a terminal whenever `--json` output is read there. Each of them is written as a
/// `\uXXXX` escape, which every JSON reader decodes to the same text. They can occur only inside
/// strings (JSON's own syntax is ASCII), so the whole document is rewritten in one pass.
enum JSONControls {
  /// `json` with DEL, C1 and the bidirectional controls of ``TerminalText`` as `\uXXXX`.
  static func escaped(_ json: [UInt8]) -> [UInt8] {
    // ASCII below DEL (nearly every document) stays as it is.
    guard let first = firstByteFromDEL(in: json) else { return json }
    var result = Array(json[..<first])
    result.reserveCapacity(json.count + 12)
    for scalar in String(decoding: json[first...], as: UTF8.self).unicodeScalars {
      if (0x7F...0x9F).contains(scalar.value) || TerminalText.isInvisibleControl(scalar) {
        let hex = String(scalar.value, radix: 16)
        result += Array("\\u\(String(repeating: "0", count: 4 - hex.count))\(hex)".utf8)
      } else {
        result += Array(String(scalar).utf8)
      }
    }
    return result
  }

  /// The index of the first byte ≥ 0x7F, if any, looked for 32 bytes at a time: each `--watch`
  /// line passes here. Per network change (`status --watch --json`, callgrind, 1.5 kB lines)
  /// this costs 1.3k instructions of 34.2k; a byte-by-byte search cost 9.9k.
  static func firstByteFromDEL(in bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBytes { buffer -> Int? in
      let count = buffer.count
      var index = 0
      // A byte is ≥ 0x7F when its high bit is set, or set once 1 is added to it (0x7F only;
      // with no byte ≥ 0x80 in the word, no addition carries into the next byte). Words, not
      // `SIMD32`: its comparison was not specialized here (20 times slower).
      func flagged(_ offset: Int) -> UInt64 {
        let word = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        return word | (word &+ 0x0101_0101_0101_0101)
      }
      while index + 32 <= count {
        let any = flagged(index) | flagged(index + 8) | flagged(index + 16) | flagged(index + 24)
        if any & 0x8080_8080_8080_8080 != 0 { break }
        index += 32
      }
      while index < count {
        if buffer[index] >= 0x7F { return index }
        index += 1
      }
      return nil
    }
  }
}
