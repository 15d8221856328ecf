/// A task identifier: a reverse-DNS string such as `com.example.sync`.
///
/// Valid identifiers are 1–128 characters long, contain at least one dot, use only
/// `A–Z a–z 0–9 - _ .`, and have no empty labels (no leading, trailing or doubled dots).
public struct TaskId: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
  /// The validated identifier text.
  public let rawValue: String

  /// Validates `rawValue` and creates an identifier.
  /// - Throws: ``TaskIdError`` naming what is wrong with the text.
  public init(_ rawValue: String) throws(TaskIdError) {
    try Self.validate(rawValue)
    self.rawValue = rawValue
  }

  /// Creates an identifier from text that was validated before (store rows).
  init(validated rawValue: String) {
    self.rawValue = rawValue
  }

  /// The identifier text.
  public var description: String { rawValue }

  /// Orders identifiers by their text.
  public static func < (lhs: TaskId, rhs: TaskId) -> Bool { lhs.rawValue < rhs.rawValue }

  /// Decodes and validates an identifier stored as a single string.
  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    try self.init(text)
  }

  /// Encodes the identifier as a single string.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }

  static func validate(_ text: String) throws(TaskIdError) {
    let count = text.utf8.count
    guard count >= 1 else { throw .empty }
    guard count <= 128 else { throw .tooLong(length: count) }
    if isWellFormedASCII(text) { return }
    for scalar in text.unicodeScalars {
      let isAllowed =
        ("0"..."9").contains(scalar) || ("A"..."Z").contains(scalar)
        || ("a"..."z").contains(scalar) || scalar == "-" || scalar == "_" || scalar == "."
      if !isAllowed { throw .invalidCharacter(Character(scalar)) }
    }
    guard text.utf8.contains(0x2E) else { throw .missingDot }
    if text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
      throw .emptyLabel
    }
  }

  /// One pass over the bytes (store rows are validated as they load): true when `text` is
  /// only allowed ASCII characters in non-empty labels separated by dots, with at least one
  /// dot. Otherwise the full check above names the problem.
  private static func isWellFormedASCII(_ text: String) -> Bool {
    var dots = 0
    var labelLength = 0
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "."):
        if labelLength == 0 { return false }
        dots += 1
        labelLength = 0
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
        labelLength += 1
      default:
        return false
      }
    }
    return dots > 0 && labelLength > 0
  }
}

/// Why a string is not a valid ``TaskId``.
///
/// Compare ``code`` to tell errors apart; new codes may be added in later versions.
public struct TaskIdError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What is wrong with the text.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Value: String, Hashable, Sendable {
      case empty, tooLong, invalidCharacter, missingDot, emptyLabel
    }

    private let value: Value

    private init(_ value: Value) {
      self.value = value
    }

    /// The identifier is empty.
    public static let empty = Code(.empty)
    /// The identifier is longer than 128 characters.
    public static let tooLong = Code(.tooLong)
    /// The identifier contains a character outside `[A-Za-z0-9-_.]`.
    public static let invalidCharacter = Code(.invalidCharacter)
    /// The identifier has no dot (it must be reverse-DNS, e.g. `com.example.sync`).
    public static let missingDot = Code(.missingDot)
    /// The identifier has an empty label (leading, trailing or doubled dot).
    public static let emptyLabel = Code(.emptyLabel)

    /// The code's name.
    public var description: String { value.rawValue }
  }

  /// What is wrong.
  public let code: Code
  /// The identifier's length (``Code/tooLong`` only).
  public let length: Int?
  /// The offending character (``Code/invalidCharacter`` only).
  public let character: Character?

  private init(_ code: Code, length: Int? = nil, character: Character? = nil) {
    self.code = code
    self.length = length
    self.character = character
  }

  /// The identifier is empty.
  public static let empty = TaskIdError(.empty)
  /// The identifier is `length` characters long; the maximum is 128.
  public static func tooLong(length: Int) -> TaskIdError { TaskIdError(.tooLong, length: length) }
  /// The identifier contains `character`, which is outside `[A-Za-z0-9-_.]`.
  public static func invalidCharacter(_ character: Character) -> TaskIdError {
    TaskIdError(.invalidCharacter, character: character)
  }
  /// The identifier has no dot.
  public static let missingDot = TaskIdError(.missingDot)
  /// The identifier has an empty label.
  public static let emptyLabel = TaskIdError(.emptyLabel)

  /// A readable explanation.
  public var description: String {
    switch code {
    case .empty: "task id is empty"
    case .tooLong: "task id is \(length ?? 0) characters long; the maximum is 128"
    case .invalidCharacter:
      "task id contains \(character.map(Self.describe) ?? "an invalid character"); only A-Z a-z 0-9 - _ . are allowed"
    case .missingDot: "task id needs at least one dot (reverse-DNS, e.g. com.example.sync)"
    case .emptyLabel: "task id has an empty label (leading, trailing or doubled dot)"
    default: "invalid task id: \(code)"
    }
  }

  /// `'é' (U+00E9)`; a control or invisible character only by its code point.
  private static func describe(_ character: Character) -> String {
    let codes = character.unicodeScalars.map { scalar in
      let hex = String(scalar.value, radix: 16, uppercase: true)
      return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }.joined(separator: " ")
    let visible = character.unicodeScalars.allSatisfy {
      $0.properties.generalCategory != .control && $0.properties.generalCategory != .format
        && !$0.properties.isWhitespace
    }
    if character.isASCII && visible { return "'\(character)'" }
    return visible ? "'\(character)' (\(codes))" : codes
  }
}
