import Foundation
import Testing

@testable import Backgrounder

@Suite struct WorkInputKeyTests {
  @Test(
    "a one-key input written directly is the encoder's bytes",
    arguments: [
      ("digest", WorkValue.string("fd4eef7b2cbf8ea9af7fbdedbf36f59c")), ("digest", .string("")),
      ("a-b_c.d", .string("x y~z")), ("digest", .string("x\"y")), ("digest", .string("a/b")),
      ("digest", .string("é")), ("n", .int(-12)), ("b", .bool(true)), ("d", .double(0.5)),
    ])
  func directBytes(key: String, value: WorkValue) throws {
    let (bytes, keyEnd) = try #require(WorkInput.serialized(key: key, value: value))
    #expect(Data(bytes) == (try WorkInput([key: value]).serialized()))
    #expect(Data(bytes[..<keyEnd]) == Data("{\"values\":{\"\(key)\":".utf8))
  }

  @Test("a key JSON would escape has no direct form", arguments: ["", "a\"b", "a/b", "a\\b", "é"])
  func escapedKeys(key: String) {
    #expect(WorkInput.serialized(key: key, value: .string("x")) == nil)
  }
}
