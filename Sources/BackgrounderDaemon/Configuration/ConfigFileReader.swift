import Foundation
import SystemPackage

/// Reads a config file whole. It must be a regular file (a directory, a FIFO or a device is
/// refused with that reason, not read or waited on) of at most ``maximumBytes``; errors name
/// the system's reason.
enum ConfigFileReader {
  /// The largest config read (16 MiB: tens of thousands of jobs).
  static let maximumBytes = 16 << 20

  /// Why the file could not be read, in the words `backgrounder` prints after its path.
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  static func contents(of path: String) throws(Failure) -> [UInt8] {
    let file: FileDescriptor
    do {
      // Non-blocking: opening a FIFO must not wait for a writer (a regular file's reads
      // are not affected).
      file = try FileDescriptor.open(
        FilePath(path), .readOnly, options: [.closeOnExec, .nonBlocking])
    } catch {
      throw Failure(description: "cannot open: \(error)")
    }
    defer { try? file.close() }
    var info = stat()
    guard fstat(file.rawValue, &info) == 0 else {
      throw Failure(description: "cannot read: \(Errno(rawValue: errno))")
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw Failure(description: "is not a regular file")
    }
    guard info.st_size <= maximumBytes else {
      throw Failure(description: "is larger than \(maximumBytes) bytes")
    }
    var contents: [UInt8] = []
    contents.reserveCapacity(Int(info.st_size))
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
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
