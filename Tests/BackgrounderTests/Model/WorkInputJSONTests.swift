import Foundation
import Testing

@testable import Backgrounder

/// ``WorkInputJSON`` reads what ``WorkInput/serialized()`` writes exactly as `JSONDecoder`
/// does, and declines (nil: the caller falls back to the decoder) whatever it cannot read.
@Suite struct WorkInputJSONTests {
  static func randomText(_ generator: inout SplitMix64) -> String {
    let pieces: [String] = [
      "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "日本",
      "😀", "\u{2028}", "{", "}", ":", ",", "[", "_0",
    ]
    let count = Int.random(in: 0...12, using: &generator)
    return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
  }

  static func randomValue(_ generator: inout SplitMix64) -> WorkValue {
    switch Int.random(in: 0..<5, using: &generator) {
    case 0: .string(randomText(&generator))
    case 1: .int(Int.random(in: .min ... .max, using: &generator))
    case 2:
      .double(
        [0, -0.0, 1, 1.5, 1e300, -2.5e-300, .pi, Double.random(in: -1e9...1e9, using: &generator)]
          .randomElement(using: &generator)!)
    case 3: .bool(Bool.random(using: &generator))
    default:
      .bytes(
        Data(
          (0..<Int.random(in: 0...40, using: &generator)).map { _ in
            UInt8.random(in: 0...255, using: &generator)
          }))
    }
  }

  @Test("random inputs: the same values as JSONDecoder")
  func sameAsTheDecoder() throws {
    // Seeded (the test kit's SplitMix64): a failing case can be reproduced. (Passing the system
    // generator, an empty struct, `inout` through a generic crashed ThreadSanitizer.)
    var generator = SplitMix64(seed: 35)
    for _ in 0..<2_000 {
      var values: [String: WorkValue] = [:]
      for _ in 0..<Int.random(in: 0...6, using: &generator) {
        let key = Self.randomText(&generator)
        if !key.isEmpty { values[key] = Self.randomValue(&generator) }
      }
      let input = WorkInput(values)
      let data = try input.serialized()
      guard !data.isEmpty else { continue }
      let decoded = try JSONDecoder().decode(WorkInput.self, from: data)
      let fast = try #require(
        WorkInputJSON.decode(data), "\(String(decoding: data, as: UTF8.self))")
      #expect(fast == decoded)
      #expect(fast == input)
    }
  }

  @Test("a stored job's input, as the daemon writes it")
  func storedJob() throws {
    let input: WorkInput = [
      "jobFormat": .int(2), "origin": .string("config"), "digest": .string("00ff"),
      "jobDefinition": .string(#"{"command":["\/bin\/true"],"id":"dev.a","env":{"A":"x\"y"}}"#),
    ]
    let data = try input.serialized()
    #expect(WorkInputJSON.decode(data) == input)
  }

  @Test("what it cannot read is declined, for the decoder to judge")
  func declined() {
    let cases = [
      #"{"values":{"a":{"string":{"_0":"x"}},"a":{"int":{"_0":1}}}}"#,  // duplicate key
      #"{"values":{"a":{"string":{"_0":"\ud800"}}}}"#,  // lone surrogate
      #"{"values":{"a":{"int":{"_0":99999999999999999999}}}}"#,  // does not fit
      #"{"values":{"a":{"int":{"_0":1.5}}}}"#,
      #"{"values":{"a":{"strin":{"_0":"x"}}}}"#,
      #"{"values":{"a":{"string":{"_0":"x","_1":"y"}}}}"#,
      #"{"values":{"a":{"string":{"_0":"x"}}}} x"#,
      "{\"values\":{\"a\":{\"string\":{\"_0\":\"tab\traw\"}}}}",  // raw control character
      #"{"values":{"a":{"bytes":{"_0":"not base64!"}}}}"#,
      #"{"other":{}}"#, "", "{",
    ]
    for text in cases {
      #expect(WorkInputJSON.decode(Data(text.utf8)) == nil, "\(text)")
    }
    #expect(WorkInputJSON.decode(Data([0x7B, 0x22, 0xFF])) == nil)
    #expect(WorkInputJSON.decode(Data(#" { "values" : { } } "#.utf8)) == WorkInput())
  }
}
