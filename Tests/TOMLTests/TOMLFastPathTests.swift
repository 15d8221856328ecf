import TOML
import Testing

/// The parser reads runs of plain bytes, plain integers and inline tables of plain keys on fast
/// paths; these inputs sit on the edges of those paths, where a wrong shortcut would show.
@Suite struct TOMLFastPathTests {
  private func failure(_ bytes: [UInt8]) -> TOMLError? {
    do {
      _ = try TOMLTable(parsing: bytes)
      return nil
    } catch {
      return error
    }
  }

  private func failure(_ text: String) -> TOMLError? { failure(Array(text.utf8)) }

  @Test func multiByteUTF8InKeysAndStringsIsKeptAndCountedAsOneColumn() throws {
    let table = try TOMLTable(
      parsing: #"""
        "clé" = "naïve ✓ 😀"
        'ключ' = 'ü😀 \n raw'
        m = """
        é😀\t"x""ü"""
        l = '''
        😀 ''ü'''
        "é\u00E9" = 1
        """#)
    #expect(table["clé"] == .string("naïve ✓ 😀"))
    #expect(table["ключ"] == .string(#"ü😀 \n raw"#))
    #expect(table["m"] == .string("é😀\t\"x\"\"ü"))
    #expect(table["l"] == .string("😀 ''ü"))
    #expect(table["éé"] == .integer(1))
    #expect(table.keys == ["clé", "ключ", "m", "l", "éé"])
    // Columns count characters: "clé" is 5 of them, so the value starts at column 9.
    #expect(table.entry("clé")?.node.position == TOMLPosition(line: 1, column: 9))
    #expect(table.entry("ключ")?.node.position == TOMLPosition(line: 2, column: 10))
  }

  @Test func escapesBetweenPlainRunsJoinInOrder() throws {
    let table = try TOMLTable(parsing: #"s = "ab\tcd\u00E9ef\"gh\\ij😀\U0001F600k""#)
    #expect(table["s"] == .string("ab\tcdéef\"gh\\ij😀😀k"))
  }

  @Test(arguments: [
    // A control character or invalid byte after a run of plain text is found where it is.
    ([UInt8]("a = \"plain text".utf8) + [0x01, UInt8(ascii: "\"")], 1, 16, "U+0001"),
    ([UInt8]("a = 'plain é text".utf8) + [0x7F, UInt8(ascii: "'")], 1, 18, "U+007F"),
    ([UInt8]("a = \"\"\"plain\n text".utf8) + [0x00] + [UInt8]("\"\"\"".utf8), 2, 6, "U+0000"),
    ([UInt8]("a = \"plain é".utf8) + [0xE9, UInt8(ascii: "\"")], 1, 13, "invalid UTF-8"),
    ([UInt8]("a = 'plain ".utf8) + [0xC0, 0x80, UInt8(ascii: "'")], 1, 12, "invalid UTF-8"),
    ([UInt8]("a = 1 # plain é comment ".utf8) + [0xF5, 0x0A], 1, 25, "invalid UTF-8"),
    ([UInt8]("a = 1 # plain comment\u{8}".utf8), 1, 22, "U+0008"),
    ([UInt8]("a = \"plain\rtext\"".utf8), 1, 11, "U+000D"),
    ([UInt8]("a = \"plain text\n\"".utf8), 1, 16, "expected '\"' to close the string"),
    ([UInt8]("a = 'plain text\r\n'".utf8), 1, 16, "expected \"'\" to close the string"),
  ])
  func badBytesAfterAPlainRunAreErrorsAtTheirPlace(
    bytes: [UInt8], line: Int, column: Int, fragment: String
  ) {
    let problem = failure(bytes)
    #expect(
      problem?.position == TOMLPosition(line: line, column: column),
      "\(String(describing: problem))")
    #expect(problem?.message.contains(fragment) == true, "\(String(describing: problem))")
  }

  @Test func crlfLineEndsEverywhere() throws {
    let text =
      "a = \"x\" # comment é\r\n[t]\r\nb = \"\"\"\r\none\r\ntwo \\\r\n  three\"\"\"\r\n"
      + "c = [\r\n  1, # one\r\n  2,\r\n]\r\nd = { e = 'f' }\r\n"
    let table = try TOMLTable(parsing: text)
    #expect(table["a"] == .string("x"))
    let t = try #require(table["t"]?.table)
    #expect(t["b"] == .string("one\ntwo three"))
    #expect(t["c"]?.array?.map(\.value) == [.integer(1), .integer(2)])
    #expect(t["d"]?.table?["e"] == .string("f"))
    #expect(t.entry("c")?.keyPosition == TOMLPosition(line: 7, column: 1))
    #expect(t.entry("d")?.node.position == TOMLPosition(line: 11, column: 5))
  }

  @Test func longLinesKeepTheirColumns() throws {
    let long = String(repeating: "é", count: 50_000) + String(repeating: "x", count: 50_000)
    let table = try TOMLTable(parsing: "a = \"\(long)\" \nb = '\(long)'")
    #expect(table["a"] == .string(long))
    #expect(table["b"] == .string(long))
    let problem = failure("a = \"\(long)\" x")
    #expect(problem?.position == TOMLPosition(line: 1, column: 100_008))
    #expect(problem?.message.contains("expected a new line") == true)
  }

  @Test(arguments: [
    ("a = 0", Int64(0)), ("a = -0", 0), ("a = +17", 17), ("a = -17", -17),
    ("a = 123456789012345678", 123_456_789_012_345_678),
    ("a = 9223372036854775807", .max), ("a = -9223372036854775808", .min),
    ("a = 1_000", 1000), ("a = 0x1F", 31), ("a = [1,2]", 1),
  ])
  func integers(text: String, expected: Int64) throws {
    let value = try #require(TOMLTable(parsing: text)["a"])
    #expect((value.integer ?? value.array?.first?.value.integer) == expected)
  }

  @Test(arguments: [
    ("a = 1e2", 100.0), ("a = 3.5", 3.5), ("a = -0.5", -0.5), ("a = 12E-1", 1.2),
  ])
  func floats(text: String, expected: Double) throws {
    #expect(try TOMLTable(parsing: text)["a"] == .float(expected))
  }

  @Test(arguments: [
    ("a = 012", "leading zeros"), ("a = 12x", "expected a new line"),
    ("a = 1__2", "underscore"), ("a = 99999999999999999999", "out of range"),
    ("a = 12_", "underscore"), ("a = -", "a digit"),
  ])
  func badIntegers(text: String, fragment: String) {
    let problem = failure(text)
    #expect(problem?.message.contains(fragment) == true, "\(String(describing: problem))")
  }

  @Test func inlineTablesWithPlainAndDottedKeys() throws {
    let table = try TOMLTable(
      parsing: "a = { x = 1, y.z = 2, w = 3 }\nb = { p.q = 1, p.r = 2 }\nc = {}")
    let a = try #require(table["a"]?.table)
    #expect(a.keys == ["x", "y", "w"])
    #expect(a["y"]?.table?["z"] == .integer(2))
    #expect(a.entry("w")?.keyPosition == TOMLPosition(line: 1, column: 23))
    #expect(table["b"]?.table?["p"]?.table?.keys == ["q", "r"])
    #expect(table["c"] == .table(TOMLTable(position: TOMLPosition(line: 3, column: 5))))
    #expect(table.entry("c")?.node.position == TOMLPosition(line: 3, column: 5))
  }

  @Test func inlineTablesWithManyKeysKeepOrderAndFindEveryKey() throws {
    let keys = (0..<40).map { "key\($0)" }
    let text = "t = { " + keys.map { "\($0) = \"\($0)\"" }.joined(separator: ", ") + " }"
    let table = try #require(TOMLTable(parsing: text)["t"]?.table)
    #expect(table.keys == keys)
    for key in keys { #expect(table[key] == .string(key)) }
  }

  @Test(arguments: [
    ("t = { a = 1, b = 2, a = 3 }", 21, "key a is defined twice (first at line 1)"),
    ("t = { a = 1, b.c = 2, a = 3 }", 23, "key a is defined twice (first at line 1)"),
    ("t = { a = 1, a.b = 2 }", 14, "a is already an integer"),
    ("t = { a.b = 1, a = 2 }", 16, "key a is defined twice"),
    (
      "t = { " + (0..<20).map { "k\($0) = 0" }.joined(separator: ", ") + ", k3 = 1 }", 177,
      "key k3 is defined twice"
    ),
  ])
  func duplicateKeysInInlineTables(text: String, column: Int, fragment: String) {
    let problem = failure(text)
    #expect(problem?.position.column == column, "\(String(describing: problem))")
    #expect(problem?.message.contains(fragment) == true, "\(String(describing: problem))")
  }

  @Test func deepInlineNestingStopsAtTheLimit() {
    func nested(_ depth: Int) -> String {
      "x = " + String(repeating: "{a=", count: depth) + "1" + String(repeating: "}", count: depth)
    }
    #expect(failure(nested(128)) == nil)
    let problem = failure(nested(129))
    #expect(problem?.message == "tables and arrays nested more than 128 deep")
    #expect(problem?.position == TOMLPosition(line: 1, column: 389))
  }
}
