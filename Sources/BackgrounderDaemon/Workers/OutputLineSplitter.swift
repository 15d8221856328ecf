import Foundation

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
  mutating func append(_ chunk: UnsafeRawBufferPointer) -> [Line] {
    guard let base = chunk.baseAddress else { return [] }
    var lines: [Line] = []
    var start = 0
    while start < chunk.count {
      let found = memchr(base + start, Int32(UInt8(ascii: "\n")), chunk.count - start)
      let end = found.map { base.distance(to: UnsafeRawPointer($0)) } ?? chunk.count
      let kept = min(end - start, maxLineLength - pending.count)
      pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<(start + kept)]))
      dropped += end - start - kept
      guard found != nil else { break }
      lines.append(Line(bytes: pending, truncatedBytes: dropped))
      pending.removeAll(keepingCapacity: true)
      dropped = 0
      start = end + 1
    }
    return lines
  }

  /// The lines completed by `bytes`.
  mutating func append(_ bytes: [UInt8]) -> [Line] {
    bytes.withUnsafeBytes { append($0) }
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
