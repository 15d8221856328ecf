import Foundation
import Testing

@testable import BackgrounderCLI

/// `--json` output leaves no control a terminal acts on: the encoder's DEL, C1 and
/// bidirectional controls become `\uXXXX`, and the document still decodes to the same text.
struct JSONControlsTests {
  @Test func encoderLeftoversAreEscapedAndTheTextDecodesTheSame() throws {
    let hostile = "\u{1B}[2J\u{9B}31m\u{85}del\u{7F} é\u{202E}txt\u{2066}ok ✓"
    let encoded = Array(try Output.jsonData(["reason": hostile]))
    let escaped = JSONControls.escaped(encoded)
    let text = String(decoding: escaped, as: UTF8.self)
    #expect(text == #"{"reason":"\u001b[2J\u009b31m\u0085del\u007f é\u202etxt\u2066ok ✓"}"#)
    let decoded = try JSONSerialization.jsonObject(with: Data(escaped)) as? [String: String]
    #expect(decoded?["reason"] == hostile)
  }

  @Test func theWordAtATimeSearchFindsTheFirstByteFromDEL() {
    for length in 0..<100 {
      for position in 0..<length {
        for byte: UInt8 in [0x7F, 0x80, 0xC2, 0xFF] {
          var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
          bytes[position] = byte
          if position + 1 < length { bytes[position + 1] = 0x7E }
          #expect(JSONControls.firstByteFromDEL(in: bytes) == position, "\(bytes)")
        }
      }
      let plain = (0..<length).map { UInt8(0x20 + $0 % 0x5F) }
      #expect(JSONControls.firstByteFromDEL(in: plain) == nil)
    }
  }

  @Test func documentsWithoutThemAreTheSameBytes() throws {
    let plain = Array(try Output.jsonData(["name": "Café ✓", "id": "dev.example.a"]))
    #expect(JSONControls.escaped(plain) == plain)
  }
}
