import Foundation
import Testing

@testable import BackgrounderDaemon

@Suite(.serialized)
struct IdleMemoryTests {
  /// `RssFile` of /proc/self/status, in KiB: the resident pages mapped from files.
  private func residentFileKibibytes() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssFile:") })
    return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
  }

  @Test("falling idle unmaps the code and read-only pages touched so far; the process goes on")
  func idleReleaseUnmapsFilePages() throws {
    let before = try residentFileKibibytes()
    HeapTuning.releaseIdleMemory()
    let after = try residentFileKibibytes()
    #expect(after < before * 3 / 4, "RssFile \(before) KiB before, \(after) KiB after")
    // Relocated data and written globals were left alone: code that reads them still works.
    let decoded = try JSONDecoder().decode([String: Int].self, from: Data(#"{"a":1}"#.utf8))
    #expect(decoded == ["a": 1])
  }
}
