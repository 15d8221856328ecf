/// Rejects a table header whose first key does not start like a key (`[.a]`, `` [`a] ``, `[ {`):
/// the TOML parser TOMLKit embeds (toml++) asserts on those instead of reporting an error, which
/// would abort the daemon or the CLI on a typo in the config. Found by `Fuzz/FuzzConfig`.
///
/// The scan follows just enough TOML to know where a header can begin: at the start of a line,
/// outside strings (basic, literal, multi-line), comments and multi-line arrays.
enum TableHeaderCheck {
  /// The 1-based line of the first header toml++ would assert on, if any.
  static func firstBadHeaderLine(in text: String) -> Int? {
    var scanner = Scanner(bytes: Array(text.utf8))
    return scanner.run()
  }

  private struct Scanner {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var depth = 0
    var atLineStart = true
    var inHeader = false

    mutating func run() -> Int? {
      while index < bytes.count {
        let byte = bytes[index]
        switch byte {
        case UInt8(ascii: "\n"):
          line += 1
          inHeader = false
          atLineStart = depth == 0
          index += 1
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
          index += 1
        case UInt8(ascii: "#"):
          while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
          atLineStart = false
          skipString(quote: byte)
        case UInt8(ascii: "[") where atLineStart && depth == 0:
          atLineStart = false
          if !headerStartsWithKey(after: index) { return line }
          inHeader = true
          index += 1
        case UInt8(ascii: "["), UInt8(ascii: "{"):
          atLineStart = false
          if !inHeader { depth += 1 }
          index += 1
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
          atLineStart = false
          if !inHeader { depth = max(0, depth - 1) }
          index += 1
        default:
          atLineStart = false
          index += 1
        }
      }
      return nil
    }

    /// Whether the header opening at `start` reaches a key (or the `]` toml++ reports itself).
    func headerStartsWithKey(after start: Int) -> Bool {
      var position = start + 1
      let leading = skipBlanks(from: &position)
      if position < bytes.count, bytes[position] == UInt8(ascii: "["), !leading {
        position += 1
        _ = skipBlanks(from: &position)
      }
      guard position < bytes.count else { return true }  // toml++ reports the end of input
      let byte = bytes[position]
      return isBareKeyByte(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
        || byte == UInt8(ascii: "]")
    }

    private func skipBlanks(from position: inout Int) -> Bool {
      let start = position
      while position < bytes.count,
        bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t")
      {
        position += 1
      }
      return position > start
    }

    private func isBareKeyByte(_ byte: UInt8) -> Bool {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
        return true
      default:
        return false
      }
    }

    /// Skips a basic or literal string, single- or multi-line, leaving `index` after it.
    mutating func skipString(quote: UInt8) {
      let escapes = quote == UInt8(ascii: "\"")
      let multiLine =
        index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote
      index += multiLine ? 3 : 1
      while index < bytes.count {
        let byte = bytes[index]
        if escapes && byte == UInt8(ascii: "\\") {
          if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { line += 1 }
          index += 2
          continue
        }
        if byte == UInt8(ascii: "\n") {
          if !multiLine { return }  // unterminated: toml++ reports it
          line += 1
        }
        if byte == quote {
          if !multiLine {
            index += 1
            return
          }
          if index + 2 < bytes.count, bytes[index + 1] == quote, bytes[index + 2] == quote {
            index += 3
            // Up to two more quotes may belong to the string's content.
            while index < bytes.count, bytes[index] == quote { index += 1 }
            return
          }
        }
        index += 1
      }
    }
  }
}
