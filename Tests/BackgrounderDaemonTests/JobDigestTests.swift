import Foundation
import SystemCalls
import TOML
import Testing

@testable import BackgrounderDaemon

@Suite struct JobDigestTests {
  private func digests(_ text: String) throws -> [String: String] {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("job-digest-\(UUID().uuidString).toml").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return try ConfigurationLoader.load(path: path).jobDigests
  }

  @Test("FNV-1a 128 gives the published test vectors")
  func publishedVectors() {
    var empty = StableHasher()
    empty.combine(bytes: [UInt8]())
    #expect(empty.hex == "6c62272e07bb014262b821756295c58d")
    var a = StableHasher()
    a.combine(bytes: Array("a".utf8))
    #expect(a.hex == "d228cb696f1a8caf78912b704e4a8964")
  }

  @Test("this build has a build ID, the same on every read")
  func buildID() throws {
    let hex = try #require(ProgramBuildID.hex)
    #expect(hex.count >= 16 && hex.count % 2 == 0)
    #expect(hex.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    #expect(ProgramBuildID.hex == hex)
  }

  @Test("a job's digest is what its table says: not comments, spacing or other jobs")
  func digestOfTheTable() throws {
    let text = """
      [[job]]
      id = "dev.example.a"
      command = ["/bin/true", "x"]
      every = "1h"
      [[job]]
      id = "dev.example.b"
      command = ["/bin/true"]
      every = "1h"
      """
    let plain = try digests(text)
    let spaced = try digests(
      """
      # the same jobs, written differently
      [[job]]
      id    = "dev.example.a"   # a
      command = [ "/bin/true",
        "x" ]
      every = '1h'

      [[job]]
      id = "dev.example.b"
      command = ["/bin/true"]
      every = "1h"
      """)
    #expect(plain.count == 2)
    #expect(plain == spaced)
    #expect(plain["dev.example.a"] != plain["dev.example.b"])
    let changed = try digests(
      text.replacingOccurrences(of: "every = \"1h\"\n[[job]]", with: "every = \"2h\"\n[[job]]"))
    #expect(changed["dev.example.a"] != plain["dev.example.a"])
    #expect(changed["dev.example.b"] == plain["dev.example.b"])
  }

  @Test("values of different types or split differently digest differently")
  func typesAndBoundaries() throws {
    func digest(_ table: String) throws -> String {
      let document = try TOMLTable(parsing: table)
      var hasher = StableHasher()
      hasher.combine(document)
      return hasher.hex
    }
    #expect(try digest("a = 1") != digest("a = \"1\""))
    #expect(try digest("a = 1") != digest("a = 1.0"))
    #expect(try digest("a = [\"ab\", \"c\"]") != digest("a = [\"a\", \"bc\"]"))
    #expect(try digest("a = {b = 1}") != digest("a.c = 1"))
    #expect(try digest("a = true") != digest("a = false"))
    #expect(try digest("a = 1979-05-27T07:32:00Z") != digest("a = 1979-05-27T07:32:00"))
  }
}
