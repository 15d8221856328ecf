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

  @Test func documentsWithoutThemAreTheSameBytes() throws {
    let plain = Array(try Output.jsonData(["name": "Café ✓", "id": "dev.example.a"]))
    #expect(JSONControls.escaped(plain) == plain)
  }
}
