import Foundation
import Glibc

/// Writes whole lines straight to stdout/stderr with write(2): nothing is buffered, so each
/// `--watch` line reaches its reader at once.
enum Output {
  static func line(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

  static func warning(_ text: String) { write("warning: \(text)\n", to: STDERR_FILENO) }

  static func error(_ text: String) { write("error: \(text)\n", to: STDERR_FILENO) }

  static func json(_ document: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(document), as: UTF8.self)
  }

  private static func write(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      bytes = bytes.dropFirst(written)
    }
  }
}
