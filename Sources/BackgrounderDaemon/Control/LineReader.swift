import Foundation
import SystemCalls
import SystemPackage

#if canImport(Glibc)
  import Glibc
#endif

/// Reads newline-delimited messages from a stream socket, keeping what follows a newline for
/// the next call (a stream of events arrives several lines at a time).
struct LineReader {
  private var buffer = Data()
  private let path: String

  init(path: String) {
    self.path = path
  }

  /// The next line without its newline; nil at end of stream.
  mutating func next(_ fd: Int32) throws(ControlSocketError) -> Data? {
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = buffer[buffer.startIndex..<newline]
        buffer.removeSubrange(buffer.startIndex...newline)
        return Data(line)
      }
      if buffer.count > ControlFraming.maximumMessageSize {
        throw .badMessage("message over 256 KiB")
      }
      let count: Int
      do {
        count = try systemCall("read") { recv(fd, &chunk, chunk.count, 0) }
      } catch {
        throw .system(SystemCallError(error.operation, path: path, errno: error.errno))
      }
      if count == 0 { return nil }
      buffer.append(contentsOf: chunk[..<count])
    }
  }
}
