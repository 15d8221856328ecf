/// Text from outside (the store, the config, job output, SSIDs, hostnames, reasons) made safe for
/// a terminal: every human verb's output passes through ``escaped(_:keepingLines:)`` on its way
/// out (``Output``), so no value can move the cursor, retitle the window, write the clipboard
/// (OSC 52) or hide text behind a bidirectional override.
enum TerminalText {
  /// `text` with C0 controls (ESC as `\x1b`), DEL and C1 controls written as `\xNN`, and
  /// bidirectional controls and line or paragraph separators as `\u{202E}`. With `keepingLines`
  /// (whole output), newlines and tabs stay as they are: the formatter laid them out; without it
  /// (one field), they become `\n` and `\t` and backslashes `\\`.
  static func escaped(_ text: String, keepingLines: Bool = true) -> String {
    // Printable ASCII (nearly all output) stays as it is.
    if text.utf8.allSatisfy({
      ($0 >= 0x20 && $0 < 0x7F && (keepingLines || $0 != UInt8(ascii: "\\")))
        || (keepingLines && ($0 == 0x0A || $0 == 0x09))
    }) {
      return text
    }
    var result = ""
    result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n" where keepingLines, "\t" where keepingLines:
        result.unicodeScalars.append(scalar)
      case "\\": result += keepingLines ? "\\" : "\\\\"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      default:
        if scalar.properties.generalCategory == .control {  // C0, DEL and C1: all below U+0100
          let hex = String(scalar.value, radix: 16)
          result += "\\x" + (hex.count < 2 ? "0" : "") + hex
        } else if isInvisibleControl(scalar) || (!keepingLines && isFormat(scalar)) {
          result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result
  }

  /// Bidirectional embeddings, overrides, isolates and marks, and line or paragraph separators:
  /// they reorder or break what follows.
  static func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default:
      scalar.properties.generalCategory == .lineSeparator
        || scalar.properties.generalCategory == .paragraphSeparator
    }
  }

  /// Other invisible format characters and unassigned code points, escaped in one field (an
  /// interface name) but kept in running text, where they join emoji.
  private static func isFormat(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.generalCategory == .format || scalar.properties.generalCategory == .unassigned
  }
}
