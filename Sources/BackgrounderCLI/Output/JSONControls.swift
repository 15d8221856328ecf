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
    guard let first = json.firstIndex(where: { $0 >= 0x7F }) else { return json }
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
}
