import Foundation
import TOML
import Testing

@Suite struct TOMLParserTests {
  private func parse(_ text: String) throws(TOMLError) -> TOMLTable {
    try TOMLTable(parsing: text)
  }

  private func failure(_ text: String) -> TOMLError? {
    do {
      _ = try parse(text)
      return nil
    } catch {
      return error
    }
  }

  private func failure(bytes: [UInt8]) -> TOMLError? {
    do {
      _ = try TOMLTable(parsing: bytes)
      return nil
    } catch {
      return error
    }
  }

  @Test func readsEveryValueType() throws {
    let table = try parse(
      #"""
      s = "a\tb\u00E9\U0001F600"
      i = -9223372036854775808
      h = 0xdead_BEEF
      f = 6.626e-34
      b = true
      odt = 1979-05-27T00:32:00.5-07:00
      ldt = 1979-05-27 07:32:00
      ld = 1979-05-27
      lt = 07:32:00.999999
      a = [1, "two", [3]]
      t = { x.y = 1 }
      """#)
    #expect(table["s"] == .string("a\tbé😀"))
    #expect(table["i"] == .integer(.min))
    #expect(table["h"] == .integer(0xDEAD_BEEF))
    #expect(table["f"] == .float(6.626e-34))
    #expect(table["b"] == .boolean(true))
    #expect(table["odt"]?.dateTime?.description == "1979-05-27T00:32:00.5-07:00")
    #expect(table["odt"]?.typeName == "offset date-time")
    #expect(table["ldt"]?.dateTime?.kind == .localDateTime)
    #expect(table["ld"]?.dateTime?.kind == .localDate)
    #expect(table["lt"]?.dateTime?.time?.nanosecond == 999_999_000)
    #expect(table["a"]?.array?.map(\.value.typeName) == ["integer", "string", "array"])
    #expect(table["t"]?.table?["x"]?.table?["y"] == .integer(1))
    #expect(table.keys == ["s", "i", "h", "f", "b", "odt", "ldt", "ld", "lt", "a", "t"])
  }

  @Test func everyKeyAndValueHasItsLineAndColumn() throws {
    let table = try parse("a = 1\n\n[t]\n  \"é\" =   [\n  true,\n    'x']\n")
    let a = try #require(table.entry("a"))
    #expect(a.keyPosition == TOMLPosition(line: 1, column: 1))
    #expect(a.node.position == TOMLPosition(line: 1, column: 5))
    let t = try #require(table["t"]?.table)
    #expect(t.position == TOMLPosition(line: 3, column: 1))
    let e = try #require(t.entry("é"))
    #expect(e.keyPosition == TOMLPosition(line: 4, column: 3))
    #expect(e.node.position == TOMLPosition(line: 4, column: 11))
    #expect(
      e.node.value.array?.map(\.position) == [
        TOMLPosition(line: 5, column: 3), TOMLPosition(line: 6, column: 5),
      ])
  }

  /// toml++ (inside the TOMLKit this replaced) aborted the process on this (FuzzConfig).
  @Test func anArrayClosedByABraceIsAnError() throws {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/fuzz/FuzzConfig/value-array-closed-by-brace.toml")
    let bytes = try #require(FileManager.default.contents(atPath: url.path))
    let problem = failure(bytes: Array(bytes))
    #expect(
      problem?.description == "1:7: expected a value (a string, number, boolean, "
        + "date-time, array or inline table), found '}'")
  }

  @Test(arguments: [
    ("a = 1\nb = [1, }\n", 2, 9, "expected a value"),
    ("[store]\npath = \"/tmp/x\"\n\nthis is not toml\n", 4, 6, "expected '=' after the key"),
    ("a = \"abc\n", 1, 9, "expected '\"' to close the string"),
    ("a = \"\\q\"\n", 1, 6, "invalid escape sequence"),
    ("a = \"\\uD800\"\n", 1, 6, "U+D800 is not a Unicode scalar value"),
    ("a = 0777\n", 1, 5, "leading zeros"),
    ("a = 1__0\n", 1, 7, "underscore in a number must be between two digits"),
    ("a = 9223372036854775808\n", 1, 5, "out of range"),
    ("a = 0x8000000000000000\n", 1, 5, "out of range"),
    ("a = 1979-02-29\n", 1, 5, "day 29 is not between 1 and 28"),
    ("a = 07:32\n", 1, 10, "seconds are required"),
    ("a = { b = 1, }\n", 1, 14, "trailing comma"),
    ("a = { b = 1\n}\n", 1, 12, "on one line"),
    ("a = 1 # bell \u{7}\n", 1, 14, "control character U+0007 is not allowed in a comment"),
    ("a = \"x\u{1}\"\n", 1, 7, "write it as \\u0001"),
    ("a = 1\rb = 2\n", 1, 6, "expected a new line"),
    ("a = 1\r\nb = 2\r\n[c\r\n", 3, 3, "expected ']' to close the table header"),
    ("[.a]\n", 1, 2, "a table header must start with a key"),
    ("[[a]\n", 1, 4, "expected ']]'"),
    ("a = 1\na = 2\n", 2, 1, "key a is defined twice (first at line 1)"),
    ("[a]\n[b]\n[a]\n", 3, 1, "table [a] is defined twice (first at line 1)"),
    ("[a]\nb.c = 1\n[a.b]\n", 3, 1, "already defined with dotted keys (line 2)"),
    ("a = { b = 1 }\na.c = 2\n", 2, 1, "a is already an inline table (line 1), which cannot"),
    ("[a.b]\n[a]\nb.c = 1\n", 3, 1, "defined by its header at line 1"),
    ("[[a]]\n[a]\n", 2, 1, "already an array of tables"),
    ("a = []\n[[a]]\n", 2, 1, "cannot define [[a]]: it is already an array"),
    // The part of a longer key that is in the way is named up to itself.
    ("a.b = 1\na.b.c.d = 2\n", 2, 3, "a.b is already an integer (line 1), which cannot"),
    ("x.y = 1\n[x.y.z.w]\n", 2, 1, "x.y is already an integer (line 1), so [x.y.z.w] cannot"),
  ])
  func errorsNameLineColumnAndWhatWasExpected(
    text: String, line: Int, column: Int, fragment: String
  ) {
    let problem = failure(text)
    #expect(
      problem?.position == TOMLPosition(line: line, column: column),
      "\(String(describing: problem))")
    #expect(problem?.message.contains(fragment) == true, "\(String(describing: problem))")
  }

  @Test func invalidUTF8IsAnErrorAtItsPosition() {
    let problem = failure(bytes: Array("a = \"é".utf8) + [0xFF, UInt8(ascii: "\""), 0x0A])
    #expect(problem?.position == TOMLPosition(line: 1, column: 7))
    #expect(problem?.message == "invalid UTF-8 (byte 0xFF)")
  }

  /// Nesting is bounded, so no input can overflow the stack (the parser and everything that
  /// walks its tables recurse at most 128 deep).
  static func deepDocuments() -> [String] {
    let many = 100_000
    func dotted(_ name: String, _ count: Int) -> String {
      Array(repeating: name, count: count).joined(separator: ".")
    }
    var documents: [String] = []
    documents.append("x = " + String(repeating: "[", count: many))
    documents.append("x = " + String(repeating: "{a=", count: many))
    documents.append(String(repeating: "[", count: many))
    documents.append("[" + dotted("a", many) + "]")
    documents.append(dotted("a", many) + " = 1")
    documents.append((1...200).map { "[" + dotted("a", $0) + "]" }.joined(separator: "\n"))
    documents.append("[" + dotted("a", 100) + "]\n" + dotted("b", 100) + " = 1")
    documents.append("x = " + String(repeating: "[{a=", count: 100))
    return documents
  }

  @Test(arguments: deepDocuments())
  func deepNestingIsAnError(text: String) {
    let problem = failure(text)
    #expect(problem != nil)
    #expect(
      problem.map { $0.message.contains("128") || $0.message.contains("must start with a key") }
        == true, "\(String(describing: problem))")
  }

  @Test func nestingUpToTheLimitIsAccepted() throws {
    let depth = 127
    let table = try parse(
      "x = " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
    var value = try #require(table["x"])
    for _ in 1..<depth { value = try #require(value.array?.first?.value) }
    #expect(value == .array([]))
  }

  @Test func crlfEndsLinesAndBecomesLFInMultiLineStrings() throws {
    let table = try parse("a = '''\r\nx\r\ny'''\r\nb = 2\r\n")
    #expect(table["a"] == .string("x\ny"))
    #expect(table.entry("b")?.keyPosition.line == 4)
  }

  @Test func equalityIgnoresPositionsAndKeyOrder() throws {
    #expect(try parse("a = 1\nb = [2]") == parse("b = [ 2 ]\n\n\na = 1"))
    #expect(try parse("a = 1") != parse("a = 2"))
  }
}
