import Foundation

/// A value stored in a ``WorkInput``.
public enum WorkValue: Hashable, Sendable, Codable {
  /// Text.
  case string(String)
  /// A signed integer.
  case int(Int)
  /// A floating-point number.
  case double(Double)
  /// A boolean.
  case bool(Bool)
  /// Raw bytes.
  case bytes(Data)
}

/// A typed key/value bag handed to a worker.
///
/// Limits, checked when a request is scheduled: every key is non-empty (else the request is
/// rejected with ``RejectionReason/emptyInputKey``), and the serialized form is at most
/// ``WorkInput/maximumSerializedSize`` bytes (else ``RejectionReason/inputTooLarge(bytes:)``).
public struct WorkInput: Hashable, Sendable, Codable, ExpressibleByDictionaryLiteral {
  /// The maximum serialized size, in bytes (10,240, as in the reference).
  public static let maximumSerializedSize = 10_240

  /// The stored values by key (keys must not be empty).
  public var values: [String: WorkValue]

  /// Creates an input from a dictionary.
  public init(_ values: [String: WorkValue] = [:]) {
    self.values = values
  }

  /// Creates an input from a dictionary literal.
  public init(dictionaryLiteral elements: (String, WorkValue)...) {
    self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
  }

  /// The value for `key`, if any.
  public subscript(key: String) -> WorkValue? {
    get { values[key] }
    set { values[key] = newValue }
  }

  /// The string stored under `key`, if it is a string.
  public func string(_ key: String) -> String? {
    if case .string(let value) = values[key] { value } else { nil }
  }

  /// The integer stored under `key`, if it is an integer.
  public func int(_ key: String) -> Int? {
    if case .int(let value) = values[key] { value } else { nil }
  }

  /// The number stored under `key`, if it is a double.
  public func double(_ key: String) -> Double? {
    if case .double(let value) = values[key] { value } else { nil }
  }

  /// The boolean stored under `key`, if it is a boolean.
  public func bool(_ key: String) -> Bool? {
    if case .bool(let value) = values[key] { value } else { nil }
  }

  /// The bytes stored under `key`, if they are bytes.
  public func bytes(_ key: String) -> Data? {
    if case .bytes(let value) = values[key] { value } else { nil }
  }

  /// Whether some key is the empty string (such an input cannot be scheduled).
  public var hasEmptyKey: Bool { values.keys.contains("") }

  /// The serialized form (JSON with sorted keys); its size is what the limit applies to.
  public func serialized() throws -> Data {
    if values.isEmpty { return Data() }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try encoder.encode(self)
  }

  /// The serialized form of the one-key input `[key: value]` (`{"values":{"key":value}}`) and
  /// where `{"values":{"key":` ends in it; nil for a key JSON would escape. A string value that
  /// JSON writes as it is (printable ASCII but a quote, a backslash and a slash) is written here
  /// directly, the same bytes as ``serialized()`` (a test compares them), without an encoder: a
  /// caller comparing a digest per stored task does it thousands of times at a start.
  static func serialized(key: String, value: WorkValue) -> ([UInt8], keyEnd: Int)? {
    func plain(_ text: String) -> Bool {
      text.utf8.allSatisfy {
        $0 >= 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
          && $0 != UInt8(ascii: "/")
      }
    }
    guard !key.isEmpty, plain(key) else { return nil }
    var bytes = Array(#"{"values":{""#.utf8)
    bytes.append(contentsOf: key.utf8)
    bytes.append(contentsOf: #"":"#.utf8)
    let keyEnd = bytes.count
    if case .string(let text) = value, plain(text) {
      bytes.append(contentsOf: #"{"string":{"_0":""#.utf8)
      bytes.append(contentsOf: text.utf8)
      bytes.append(contentsOf: #""}}}}"#.utf8)
      return (bytes, keyEnd)
    }
    guard let encoded = try? WorkInput([key: value]).serialized(), encoded.starts(with: bytes)
    else { return nil }
    return (Array(encoded), keyEnd)
  }

  /// Decodes the serialized form produced by ``serialized()``.
  static func deserialize(_ data: Data) throws -> WorkInput {
    if data.isEmpty { return WorkInput() }
    if let input = WorkInputJSON.decode(data) { return input }
    return try JSONDecoder().decode(WorkInput.self, from: data)
  }
}
