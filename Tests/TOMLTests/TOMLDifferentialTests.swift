import Foundation
import TOML
import Testing

/// Our parser against Python's tomllib over every TOML file under `Fixtures/`: a document both
/// accept must give the same typed value tree, and every document in `Fixtures/toml/invalid`
/// must be rejected by both.
@Suite(.enabled(if: Tomllib.python != nil, "needs python3 (3.11 or later, with tomllib)"))
struct TOMLDifferentialTests {
  static let fixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

  /// Every `.toml` file under `Fixtures/` but the invalid ones and the fuzz findings.
  static func validDocuments() -> [String] {
    tomlFiles(under: fixtures).filter { !$0.contains("/toml/invalid/") && !$0.contains("/fuzz/") }
  }

  /// Inputs that once broke `Fuzz/FuzzConfig`, valid or not.
  static func fuzzFindings() -> [String] {
    tomlFiles(under: fixtures.appendingPathComponent("fuzz/FuzzConfig"))
  }

  static func invalidDocuments() -> [String] {
    tomlFiles(under: fixtures.appendingPathComponent("toml/invalid"))
  }

  private static func tomlFiles(under directory: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: directory.path)
    var files: [String] = []
    while let relative = enumerator?.nextObject() as? String {
      if relative.hasSuffix(".toml") {
        files.append(directory.appendingPathComponent(relative).path)
      }
    }
    return files.sorted()
  }

  /// Integers TOML 1.0 says must be rejected when they do not fit in 64 bits, which tomllib
  /// accepts because Python's integers are unbounded.
  static let beyond64Bits: Set = [
    "integer-overflow.toml", "integer-underflow.toml", "integer-hex-overflow.toml",
  ]

  @Test func theFixturesExist() {
    #expect(Self.validDocuments().count >= 30)
    #expect(Self.invalidDocuments().count >= 40)
  }

  @Test func validDocumentsGiveTomllibsTree() throws {
    let files = Self.validDocuments()
    let expected = try Tomllib.canonicalTrees(files)
    for file in files {
      let name = file.replacingOccurrences(of: Self.fixtures.path + "/", with: "")
      let theirs = try #require(expected[file], "tomllib printed nothing for \(name)")
      #expect(!theirs.hasPrefix("{\"error\""), "tomllib rejects \(name): \(theirs)")
      let bytes = try #require(FileManager.default.contents(atPath: file))
      do {
        let table = try TOMLTable(parsing: Array(bytes))
        #expect(CanonicalForm.text(of: table) == theirs, "\(name)")
      } catch {
        Issue.record("we reject \(name): \(error)")
      }
    }
  }

  @Test func fuzzFindingsGetTomllibsVerdict() throws {
    let files = Self.fuzzFindings()
    let expected = try Tomllib.canonicalTrees(files)
    #expect(!files.isEmpty)
    for file in files {
      let name = file.replacingOccurrences(of: Self.fixtures.path + "/", with: "")
      let theirs = try #require(expected[file], "tomllib printed nothing for \(name)")
      let bytes = try #require(FileManager.default.contents(atPath: file))
      let ours = Result { () throws(TOMLError) in try TOMLTable(parsing: Array(bytes)) }
      switch ours {
      case .success(let table): #expect(CanonicalForm.text(of: table) == theirs, "\(name)")
      case .failure: #expect(theirs.hasPrefix("{\"error\""), "only we reject \(name)")
      }
    }
  }

  @Test func invalidDocumentsAreRejectedByBoth() throws {
    let files = Self.invalidDocuments()
    let expected = try Tomllib.canonicalTrees(files)
    for file in files {
      let name = file.replacingOccurrences(of: Self.fixtures.path + "/", with: "")
      let theirs = try #require(expected[file], "tomllib printed nothing for \(name)")
      if !Self.beyond64Bits.contains((file as NSString).lastPathComponent) {
        #expect(theirs.hasPrefix("{\"error\""), "tomllib accepts \(name)")
      }
      let bytes = try #require(FileManager.default.contents(atPath: file))
      #expect(throws: TOMLError.self, "we accept \(name)") { try TOMLTable(parsing: Array(bytes)) }
    }
  }
}

/// Runs `Fixtures/toml/tomllib-canonical.py`.
enum Tomllib {
  /// A python3 that has tomllib: Debian's first, then the one on PATH.
  static let python: String? = {
    for candidate in ["/usr/bin/python3", "/usr/local/bin/python3"] + pathCandidates()
    where FileManager.default.isExecutableFile(atPath: candidate) {
      if (try? run(candidate, ["-c", "import tomllib"]))?.status == 0 { return candidate }
    }
    return nil
  }()

  private static func pathCandidates() -> [String] {
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
      "\($0)/python3"
    }
  }

  /// File → the canonical tree (or `{"error":…}`) tomllib gives for it.
  static func canonicalTrees(_ files: [String]) throws -> [String: String] {
    let script = TOMLDifferentialTests.fixtures.appendingPathComponent("toml/tomllib-canonical.py")
    let result = try run(try #require(python), [script.path] + files)
    #expect(result.status == 0, "tomllib-canonical.py failed")
    var trees: [String: String] = [:]
    for line in result.output.split(separator: "\n") {
      let parts = line.split(separator: "\t", maxSplits: 1)
      if parts.count == 2 { trees[String(parts[0])] = String(parts[1]) }
    }
    return trees
  }

  private static func run(_ executable: String, _ arguments: [String]) throws -> (
    status: Int32, output: String
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }
}
