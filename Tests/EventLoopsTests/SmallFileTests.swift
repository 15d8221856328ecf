import Foundation
import SystemCalls
import Testing

/// `readSmallFile`: the whole file up to the limit, a missing file as its errno, and a FIFO
/// where a file belongs refused, never waited on.
@Suite struct SmallFileTests {
  private func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "small-file-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
  }

  @Test func readsTheWholeFileUpToTheLimit() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
    try Data(bytes).write(to: URL(fileURLWithPath: directory + "/file"))
    #expect(try readSmallFile(directory + "/file", limit: 16_384) == bytes)
    #expect(try readSmallFile(directory + "/file", limit: 100) == Array(bytes.prefix(100)))
    #expect(try readSmallFile(directory + "/file", limit: 0) == [])
    // Exactly the limit, and an empty file.
    #expect(try readSmallFile(directory + "/file", limit: 10_000) == bytes)
    try Data().write(to: URL(fileURLWithPath: directory + "/empty"))
    #expect(try readSmallFile(directory + "/empty", limit: 100) == [])
  }

  @Test("a /proc file, whose size reads as 0, is read whole")
  func procFile() throws {
    var status = stat()
    #expect(stat("/proc/self/status", &status) == 0 && status.st_size == 0)
    let text = String(
      decoding: try readSmallFile("/proc/self/status", limit: 1 << 20), as: UTF8.self)
    #expect(text.hasPrefix("Name:"))
    #expect(text.contains("\nVmRSS:") && text.hasSuffix("\n"))
  }

  @Test func aMissingFileThrowsItsErrno() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    #expect(
      throws: RegularFileError.system(
        SystemCallError("open", path: directory + "/none", errno: .noSuchFileOrDirectory))
    ) {
      try readSmallFile(directory + "/none", limit: 10)
    }
  }

  @Test func aFifoWithoutAWriterIsRefusedWithoutBlocking() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    #expect(mkfifo(directory + "/fifo", 0o600) == 0)
    #expect(throws: RegularFileError.notARegularFile(path: directory + "/fifo", kind: "a FIFO")) {
      try readSmallFile(directory + "/fifo", limit: 10)
    }
    #expect(
      "\(RegularFileError.notARegularFile(path: "/x", kind: "a FIFO"))"
        == "/x: is a FIFO, not a regular file")
    #expect(throws: RegularFileError.notARegularFile(path: directory, kind: "a directory")) {
      try readSmallFile(directory, limit: 10)
    }
  }
}
