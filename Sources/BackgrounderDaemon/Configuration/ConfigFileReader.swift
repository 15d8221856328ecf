import Foundation
import SystemCalls
import SystemPackage

/// Reads a config file whole. It must be a regular file (a directory, a FIFO or a device is
/// refused with what it is, not read or waited on: `openRegularFile`) of at most
/// ``maximumBytes``; errors name the system's reason.
enum ConfigFileReader {
  /// The largest config read (16 MiB: tens of thousands of jobs).
  static let maximumBytes = 16 << 20

  /// Why the file could not be read, in the words `backgrounder` prints after its path.
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  static func contents(of path: String) throws(Failure) -> [UInt8] {
    let info: stat
    let file: FileDescriptor
    do {
      // Non-blocking: a FIFO is refused, never waited on for a writer.
      let opened = try openRegularFile(path)
      file = FileDescriptor(rawValue: opened.descriptor)
      info = opened.status
    } catch .system(let error) {
      throw Failure(description: "cannot open: \(error.errno)")
    } catch {
      throw Failure(description: error.reason)
    }
    defer { try? file.close() }
    guard info.st_size <= maximumBytes else {
      throw Failure(description: "is larger than \(maximumBytes) bytes")
    }
    var contents: [UInt8] = []
    contents.reserveCapacity(Int(info.st_size))
    // Chunks the size of the file and a byte more, at least 4 KiB and at most 64 KiB: a 64 KiB
    // chunk zeroed to read a 100-byte config was 1.6 % of a one-shot `status` (issue #35).
    var chunk = [UInt8](repeating: 0, count: max(4096, min(64 * 1024, Int(info.st_size) + 1)))
    while true {
      let count: Int
      do {
        count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
      } catch {
        throw Failure(description: "cannot read: \(error)")
      }
      if count == 0 { return contents }
      guard contents.count + count <= maximumBytes else {
        throw Failure(description: "is larger than \(maximumBytes) bytes")
      }
      contents.append(contentsOf: chunk[..<count])
    }
  }
}
