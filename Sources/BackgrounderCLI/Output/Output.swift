import Foundation
import Glibc
import SystemCalls

/// Writes whole lines straight to stdout/stderr with write(2): nothing is buffered, so each
/// `--watch` line reaches its reader at once. Human text is escaped for the terminal on its way
/// out (``TerminalText``); JSON goes through ``jsonLine(_:)`` or ``line(bytes:)``, escaped by
/// its encoder and then for the terminal (``JSONControls``).
enum Output {
  /// Writes human text (one or more lines) and a newline, control characters escaped.
  static func line(_ text: String) {
    write(Array((TerminalText.escaped(text) + "\n").utf8), to: STDOUT_FILENO)
  }

  /// Writes `document` as one line of JSON (``json(_:)``), its controls escaped
  /// (``JSONControls``).
  static func jsonLine(_ document: some Encodable) throws {
    line(bytes: Array((try json(document) + "\n").utf8))
  }

  /// Writes `bytes`, a whole line ending in a newline (JSON, or text already escaped for the
  /// terminal), to stdout in one write(2); DEL, C1 and bidirectional controls a JSON encoder
  /// leaves raw are escaped (``JSONControls``).
  static func line(bytes: [UInt8]) { write(JSONControls.escaped(bytes), to: STDOUT_FILENO) }

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
