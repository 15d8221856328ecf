import Foundation
import Glibc
import SystemCalls

/// Writes whole lines straight to stdout/stderr with write(2): nothing is buffered, so each
/// `--watch` line reaches its reader at once. Human text is escaped for the terminal on its way
/// out (``TerminalText``); JSON goes through ``jsonLine(_:)``, escaped by its encoder.
enum Output {
  /// Writes human text (one or more lines) and a newline, control characters escaped.
  static func line(_ text: String) {
    write(Array((TerminalText.escaped(text) + "\n").utf8), to: STDOUT_FILENO)
  }

  /// Writes `document` as one line of JSON (``json(_:)``).
  static func jsonLine(_ document: some Encodable) throws {
    write(Array((try json(document) + "\n").utf8), to: STDOUT_FILENO)
  }

  /// Writes `bytes`, a whole line ending in a newline, to stdout in one write(2).
  static func line(bytes: [UInt8]) { write(bytes, to: STDOUT_FILENO) }

  static func warning(_ text: String) {
    write(Array("warning: \(TerminalText.escaped(text))\n".utf8), to: STDERR_FILENO)
  }

  /// Writes `text` (a whole message, e.g. ArgumentParser's "Error: …") and a newline to stderr.
  static func errorMessage(_ text: String) {
    write(Array((TerminalText.escaped(text) + "\n").utf8), to: STDERR_FILENO)
  }

  static func error(_ text: String) {
    write(Array("error: \(TerminalText.escaped(text))\n".utf8), to: STDERR_FILENO)
  }

  static func json(_ document: some Encodable) throws -> String {
    String(decoding: try jsonData(document), as: UTF8.self)
  }

  /// `document` as compact JSON with sorted keys and unescaped slashes: the format of every JSON
  /// document `backgrounder` prints.
  static func jsonData(_ document: some Encodable) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(document)
  }

  private static func write(_ bytes: [UInt8], to descriptor: Int32) {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = try? systemCall("write") {
          Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        guard let written else { return }
        offset += written
      }
    }
  }
}
