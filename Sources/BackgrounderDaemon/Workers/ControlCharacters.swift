/// Makes job output safe to print: control characters cannot move the cursor, clear the
/// screen or forge log lines.
package enum ControlCharacters {
  /// `text` with C0 controls (except tab), DEL and C1 controls written as `\u{1B}`-style escapes,
  /// and backslashes kept as they are.
  package static func escaping(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
    for scalar in text.unicodeScalars {
      if needsEscape(scalar) {
        result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
  }
}
