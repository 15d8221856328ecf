/// Splits a byte stream into lines with bounded memory: a line longer than `maxLineLength`
/// bytes keeps its first `maxLineLength` bytes and counts the rest, which are dropped.
struct OutputLineSplitter: Sendable {
  /// One line of output.
  struct Line: Sendable, Equatable {
    /// The kept bytes, without the newline.
    var bytes: [UInt8]
    /// Bytes dropped from the end of the line.
    var truncatedBytes: Int

    /// The line as text for the log: invalid UTF-8 replaced, control characters escaped, and a
    /// `… [truncated N bytes]` marker when bytes were dropped.
    var text: String {
      let text = ControlCharacters.escaping(String(decoding: bytes, as: UTF8.self))
      return truncatedBytes == 0 ? text : text + "… [truncated \(truncatedBytes) bytes]"
    }
  }

  let maxLineLength: Int
  private var pending: [UInt8] = []
  private var dropped = 0

  init(maxLineLength: Int = 4096) {
    self.maxLineLength = maxLineLength
  }

  /// The lines completed by `chunk`.
  mutating func append<Bytes: Sequence<UInt8>>(_ chunk: Bytes) -> [Line] {
    var lines: [Line] = []
    for byte in chunk {
      if byte == UInt8(ascii: "\n") {
        lines.append(Line(bytes: pending, truncatedBytes: dropped))
        pending.removeAll(keepingCapacity: true)
        dropped = 0
      } else if pending.count < maxLineLength {
        pending.append(byte)
      } else {
        dropped += 1
      }
    }
    return lines
  }

  /// The unterminated last line, if any, at end of stream.
  mutating func finish() -> Line? {
    defer {
      pending = []
      dropped = 0
    }
    return pending.isEmpty && dropped == 0 ? nil : Line(bytes: pending, truncatedBytes: dropped)
  }
}
