import Foundation
import Testing

@testable import BackgrounderCLI

/// The hand-written JSON must be the bytes `JSONEncoder` writes (users' scripts read them).
@Suite struct JSONLineWriterTests {
  /// What `JSONEncoder` (as ``Output/jsonData(_:)`` configures it) writes for `text`.
  private func encoderBytes(_ text: String) throws -> [UInt8] {
    Array(try Output.jsonData([text]).dropFirst().dropLast())  // inside `[...]`
  }

  private func writerBytes(_ text: String) -> [UInt8] {
    var writer = JSONLineWriter()
    writer.string(text)
    return writer.bytes
  }

  @Test func escapesEveryControlCharacterQuoteAndBackslashLikeJSONEncoder() throws {
    for value in 0..<0x80 {
      let text = "a" + String(UnicodeScalar(UInt8(value))) + "b"
      #expect(writerBytes(text) == (try encoderBytes(text)), "U+\(String(value, radix: 16))")
    }
  }

  @Test func leavesSlashesDeleteAndNonASCIITextAlone() throws {
    let samples = [
      "a/b", "\u{7F}", "\u{80}\u{9B}", "é", "\u{2028}\u{2029}", "\u{202E}evil", "\u{FEFF}",
      "📶 Pixel-Hotspot", "wl\u{1B}[2Jp0", "",
    ]
    for text in samples {
      #expect(writerBytes(text) == (try encoderBytes(text)), "\(text.debugDescription)")
    }
    #expect(writerBytes("a/b") == Array(#""a/b""#.utf8))
  }

  @Test func separatesKeysValuesAndArrayElementsWithCommas() {
    var writer = JSONLineWriter()
    writer.beginObject()
    writer.key("a")
    writer.beginArray()
    writer.int(1)
    writer.bool(false)
    writer.null()
    writer.beginObject()
    writer.endObject()
    writer.beginArray()
    writer.endArray()
    writer.optionalString("x")
    writer.endArray()
    writer.key("b")
    writer.raw(Array(#"{"c":2}"#.utf8))
    writer.key("d")
    writer.int(-3)
    writer.endObject()
    #expect(
      String(decoding: writer.bytes, as: UTF8.self)
        == #"{"a":[1,false,null,{},[],"x"],"b":{"c":2},"d":-3}"#)
  }

  @Test func resetStartsAFreshDocument() {
    var writer = JSONLineWriter()
    writer.beginArray()
    writer.int(1)
    writer.reset()
    writer.int(2)
    #expect(writer.bytes == Array("2".utf8))
  }
}
