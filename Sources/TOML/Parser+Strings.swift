/// The four kinds of string: basic and literal, each on one line or multi-line.
extension Parser {
  /// `"…"` with escapes, on one line.
  mutating func parseBasicString() throws(TOMLError) -> String {
    index += 1
    let start = index
    skipPlainRun(until: UInt8(ascii: "\""), escapes: true)
    if current == UInt8(ascii: "\"") {
      index += 1
      return string(in: start..<index - 1)
    }
    var text = Array(slice(start..<index))
    while true {
      guard let byte = current, !atNewline else {
        throw expected("'\"' to close the string (use \"\"\" for a multi-line string)")
      }
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: text, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try appendEscape(to: &text)
      default:
        try appendRun(to: &text, until: UInt8(ascii: "\""), escapes: true, in: "a string")
      }
    }
  }

  /// `"""…"""` with escapes and line-ending backslashes; a newline right after the opening
  /// quotes is dropped, CRLF becomes LF, up to two quotes may end the content.
  mutating func parseMultiLineBasicString() throws(TOMLError) -> String {
    index += 3
    if atNewline { consumeNewline() }
    var text: [UInt8] = []
    while true {
      guard let byte = current else { throw expected("'\"\"\"' to close the string") }
      if atNewline {
        consumeNewline()
        text.append(UInt8(ascii: "\n"))
      } else if byte == UInt8(ascii: "\"") {
        if try closeMultiLineString(quote: byte, appendingTo: &text) {
          return String(decoding: text, as: UTF8.self)
        }
      } else if byte == UInt8(ascii: "\\") {
        if let next = peek(1),
          Self.isBlank(next) || next == UInt8(ascii: "\n")
            || next == UInt8(ascii: "\r")
        {
          try skipLineEndingBackslash()
        } else {
          try appendEscape(to: &text)
        }
      } else {
        try appendRun(to: &text, until: UInt8(ascii: "\""), escapes: true, in: "a string")
      }
    }
  }

  /// `'…'` taken as written, on one line.
  mutating func parseLiteralString() throws(TOMLError) -> String {
    index += 1
    let start = index
    while true {
      skipPlainRun(until: UInt8(ascii: "'"), escapes: false)
      guard let byte = current, !atNewline else {
        throw expected("\"'\" to close the string (use ''' for a multi-line string)")
      }
      if byte == UInt8(ascii: "'") {
        index += 1
        return string(in: start..<index - 1)
      }
      try skipCharacter(in: "a literal string")
    }
  }

  /// `'''…'''` taken as written; a newline right after the opening quotes is dropped, CRLF
  /// becomes LF, up to two quotes may end the content.
  mutating func parseMultiLineLiteralString() throws(TOMLError) -> String {
    index += 3
    if atNewline { consumeNewline() }
    var text: [UInt8] = []
    while true {
      guard let byte = current else { throw expected("\"'''\" to close the string") }
      if atNewline {
        consumeNewline()
        text.append(UInt8(ascii: "\n"))
      } else if byte == UInt8(ascii: "'") {
        if try closeMultiLineString(quote: byte, appendingTo: &text) {
          return String(decoding: text, as: UTF8.self)
        }
      } else {
        try appendRun(to: &text, until: UInt8(ascii: "'"), escapes: false, in: "a literal string")
      }
    }
  }

  /// At a quote inside a multi-line string: three or more close it (the fourth and fifth belong
  /// to the content); fewer are content. Returns whether the string was closed.
  private mutating func closeMultiLineString(
    quote: UInt8, appendingTo text: inout [UInt8]
  ) throws(TOMLError) -> Bool {
    var count = 0
    while peek(count) == quote { count += 1 }
    if count < 3 {
      text.append(contentsOf: repeatElement(quote, count: count))
      index += count
      return false
    }
    let extra = min(count - 3, 2)
    text.append(contentsOf: repeatElement(quote, count: extra))
    index += 3 + extra
    return true
  }

  /// A backslash, blanks, then the end of the line: drops it with all whitespace and newlines
  /// up to the next other character.
  private mutating func skipLineEndingBackslash() throws(TOMLError) {
    index += 1
    skipBlanks()
    guard atNewline else {
      throw expected(
        "the end of the line after a line-ending backslash (a backslash followed by a space "
          + "must end the line)")
    }
    while let byte = current {
      if Self.isBlank(byte) {
        index += 1
      } else if atNewline {
        consumeNewline()
      } else {
        return
      }
    }
  }

  /// One escape sequence of a basic string: `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`.
  private mutating func appendEscape(to text: inout [UInt8]) throws(TOMLError) {
    let start = markPosition()
    index += 1
    guard let byte = current else { throw expected("an escape sequence after '\\'") }
    index += 1
    switch byte {
    case UInt8(ascii: "b"): text.append(0x08)
    case UInt8(ascii: "t"): text.append(0x09)
    case UInt8(ascii: "n"): text.append(0x0A)
    case UInt8(ascii: "f"): text.append(0x0C)
    case UInt8(ascii: "r"): text.append(0x0D)
    case UInt8(ascii: "\""): text.append(UInt8(ascii: "\""))
    case UInt8(ascii: "\\"): text.append(UInt8(ascii: "\\"))
    case UInt8(ascii: "u"): try appendUnicodeEscape(digits: 4, to: &text, at: start)
    case UInt8(ascii: "U"): try appendUnicodeEscape(digits: 8, to: &text, at: start)
    default:
      index -= 1
      throw error(
        "invalid escape sequence: '\\' must be followed by b, t, n, f, r, \", \\, u or U, "
          + "found \(found)", at: start)
    }
  }

  private mutating func appendUnicodeEscape(
    digits: Int, to text: inout [UInt8], at start: TOMLPosition
  ) throws(TOMLError) {
    var value: UInt32 = 0
    for _ in 0..<digits {
      guard let byte = current, let digit = Self.hexDigitValue(byte) else {
        throw expected("\(digits) hexadecimal digits after '\\\(digits == 4 ? "u" : "U")'")
      }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    guard let scalar = Unicode.Scalar(value) else {
      throw error(
        "\(Self.codePoint(value)) is not a Unicode scalar value (a surrogate or beyond U+10FFFF)",
        at: start)
    }
    text.append(contentsOf: String(scalar).utf8)
  }

  static func hexDigitValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Appends the characters from `index` that need no escape handling (at least one: not a
  /// newline, `quote` or backslash), refusing control characters and invalid UTF-8.
  private mutating func appendRun(
    to text: inout [UInt8], until quote: UInt8, escapes: Bool, in what: String
  ) throws(TOMLError) {
    let start = index
    skipPlainRun(until: quote, escapes: escapes)
    if index == start { try skipCharacter(in: what) }
    text.append(contentsOf: slice(start..<index))
  }

  private mutating func skipCharacter(in what: String) throws(TOMLError) {
    let byte = bytes[index]
    if Self.isControl(byte) {
      throw error(
        "control character \(Self.codePoint(UInt32(byte))) is not allowed in \(what)"
          + (what == "a string"
            ? "; write it as \\u\(Self.codePoint(UInt32(byte)).dropFirst(2))" : ""))
    }
    index += try byteCount(at: index)
  }
}
