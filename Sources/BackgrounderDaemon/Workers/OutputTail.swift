/// The last lines a command printed, kept for `status` and the store.
struct OutputTail: Sendable {
  private(set) var lines: [String] = []
  let maxLines: Int
  let maxLineLength: Int

  init(maxLines: Int = 20, maxLineLength: Int = 400) {
    self.maxLines = maxLines
    self.maxLineLength = maxLineLength
  }

  mutating func append(_ line: String) {
    let clipped = line.count > maxLineLength ? String(line.prefix(maxLineLength)) + "…" : line
    lines.append(clipped)
    if lines.count > maxLines { lines.removeFirst(lines.count - maxLines) }
  }

  var text: String { lines.joined(separator: "\n") }
}
