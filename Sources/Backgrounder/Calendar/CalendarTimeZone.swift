import Foundation

/// A time zone read from the system's tz database (`/usr/share/zoneinfo`, TZif files, RFC 8536)
/// — the rules glibc's `localtime` and `mktime` use, including their daylight-saving flags
/// (Europe/Dublin's winter time is "daylight saving" there) — so calendar elapses are computed
/// from the same data as systemd's. Foundation's `TimeZone` on Linux carries its own copy of the
/// rules (ICU's), which is why it is not used for this.
public struct CalendarTimeZone: Hashable, Sendable, CustomStringConvertible {
  /// The tz database name (`Europe/Berlin`), or `UTC`.
  public let identifier: String
  private let transitions: [Int64]
  private let transitionTypes: [UInt8]
  private let types: [LocalTimeType]
  private let rule: PosixTimeZoneRule?

  struct LocalTimeType: Hashable, Sendable {
    var offset: Int
    var isDST: Bool
    var abbreviation: String
  }

  /// Coordinated Universal Time.
  public static let utc = CalendarTimeZone(
    identifier: "UTC", transitions: [], transitionTypes: [],
    types: [LocalTimeType(offset: 0, isDST: false, abbreviation: "UTC")], rule: nil)

  /// The zone `identifier` of the system's tz database, or nil when it has none.
  public init?(identifier: String, directory: String = CalendarTimeZones.databaseDirectory) {
    if identifier == "UTC" {
      self = .utc
      return
    }
    guard !identifier.hasPrefix("/"), !identifier.split(separator: "/").contains(".."),
      let bytes = CalendarTimeZones.tzif(at: directory + identifier),
      let zone = Self(identifier: identifier, tzif: bytes)
    else { return nil }
    self = zone
  }

  /// A zone read from a TZif file's bytes, or nil when they are not one.
  init?(identifier: String, tzif bytes: [UInt8]) {
    var reader = TZifReader(bytes)
    guard let parsed = reader.read() else { return nil }
    self.init(
      identifier: identifier, transitions: parsed.transitions,
      transitionTypes: parsed.transitionTypes, types: parsed.types,
      rule: parsed.footer.flatMap(PosixTimeZoneRule.init))
  }

  private init(
    identifier: String, transitions: [Int64], transitionTypes: [UInt8],
    types: [LocalTimeType], rule: PosixTimeZoneRule?
  ) {
    self.identifier = identifier
    self.transitions = transitions
    self.transitionTypes = transitionTypes
    self.types = types
    self.rule = rule
  }

  /// The name.
  public var description: String { identifier }

  /// Zones are equal when their names are.
  public static func == (lhs: CalendarTimeZone, rhs: CalendarTimeZone) -> Bool {
    lhs.identifier == rhs.identifier
  }

  /// Hashes the name.
  public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

  /// Seconds east of UTC at `seconds` since 1970.
  public func offset(atSeconds seconds: Int64) -> Int { localTimeType(at: seconds).offset }

  /// Whether the tz database marks `seconds` since 1970 as daylight-saving time.
  public func isDaylightSavingTime(atSeconds seconds: Int64) -> Bool {
    localTimeType(at: seconds).isDST
  }

  /// The zone is UTC under any name: no offset and no daylight-saving time ever (what glibc's
  /// `timezone == 0 && daylight == 0` says, which decides systemd's "(in UTC)" lines).
  public var isUTC: Bool {
    types.allSatisfy { $0.offset == 0 && !$0.isDST }
      && (rule.map { $0.localTimeType(at: 0).offset == 0 && !$0.hasDaylightSavingTime } ?? true)
  }

  /// The abbreviation in effect (`CEST`, `+1030`).
  public func abbreviation(atSeconds seconds: Int64) -> String {
    localTimeType(at: seconds).abbreviation
  }

  func localTimeType(at seconds: Int64) -> LocalTimeType {
    if let last = transitions.last, seconds >= last, let rule {
      return rule.localTimeType(at: seconds)
    }
    guard let first = transitions.first, seconds >= first else {
      return types.first ?? Self.utc.types[0]
    }
    // The last transition at or before `seconds`.
    var low = 0
    var high = transitions.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if transitions[middle] <= seconds { low = middle } else { high = middle - 1 }
    }
    return types[Int(transitionTypes[low])]
  }
}

/// The data blocks of a TZif file (version 2 or later: the 64-bit block and the footer).
private struct TZifReader {
  let bytes: [UInt8]
  var position = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  struct Parsed {
    var transitions: [Int64]
    var transitionTypes: [UInt8]
    var types: [CalendarTimeZone.LocalTimeType]
    var footer: String?
  }

  mutating func read() -> Parsed? {
    guard let first = header(), first.version >= 2 else { return readBlock(timeSize: 4) }
    position += first.blockSize(timeSize: 4)
    guard header() != nil else { return nil }
    guard var parsed = readBlock(timeSize: 8) else { return nil }
    if position < bytes.count, bytes[position] == 0x0A,
      let end = bytes[(position + 1)...].firstIndex(of: 0x0A)
    {
      parsed.footer = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
    }
    return parsed
  }

  private struct Header {
    var version: Int
    var counts: [Int]  // isut, isstd, leap, time, type, char

    func blockSize(timeSize: Int) -> Int {
      counts[3] * timeSize + counts[3] + counts[4] * 6 + counts[5]
        + counts[2] * (timeSize + 4) + counts[1] + counts[0]
    }
  }

  private var lastHeader: Header?

  private mutating func header() -> Header? {
    guard position + 44 <= bytes.count,
      bytes[position..<position + 4].elementsEqual("TZif".utf8)
    else { return nil }
    let versionByte = bytes[position + 4]
    let version = versionByte == 0 ? 1 : Int(versionByte) - 0x30
    let counts = (0..<6).map { Int(integer(at: position + 20 + $0 * 4, size: 4)) }
    // Counts are unsigned; a file claiming more than it could hold is not a zone.
    guard counts.allSatisfy({ (0...bytes.count).contains($0) }) else { return nil }
    position += 44
    let header = Header(version: version, counts: counts)
    lastHeader = header
    return header
  }

  private mutating func readBlock(timeSize: Int) -> Parsed? {
    guard let header = lastHeader, position + header.blockSize(timeSize: timeSize) <= bytes.count
    else { return nil }
    let blockStart = position
    let (timeCount, typeCount, charCount) = (header.counts[3], header.counts[4], header.counts[5])
    guard typeCount > 0 else { return nil }
    var transitions: [Int64] = []
    for index in 0..<timeCount {
      transitions.append(integer(at: position + index * timeSize, size: timeSize))
    }
    position += timeCount * timeSize
    let transitionTypes = Array(bytes[position..<position + timeCount])
    position += timeCount
    guard transitionTypes.allSatisfy({ Int($0) < typeCount }) else { return nil }
    let typeStart = position
    position += typeCount * 6
    let characters = Array(bytes[position..<position + charCount])
    var types: [CalendarTimeZone.LocalTimeType] = []
    for index in 0..<typeCount {
      let base = typeStart + index * 6
      let nameStart = Int(bytes[base + 5])
      let nameEnd =
        characters[min(nameStart, characters.count)...].firstIndex(of: 0)
        ?? characters.count
      types.append(
        CalendarTimeZone.LocalTimeType(
          offset: Int(integer(at: base, size: 4)), isDST: bytes[base + 4] != 0,
          abbreviation: String(
            decoding: characters[min(nameStart, nameEnd)..<nameEnd], as: UTF8.self)))
    }
    position = blockStart + header.blockSize(timeSize: timeSize)
    return Parsed(
      transitions: transitions, transitionTypes: transitionTypes, types: types, footer: nil)
  }

  /// A big-endian signed integer of `size` bytes.
  private func integer(at offset: Int, size: Int) -> Int64 {
    var value: UInt64 = 0
    for byte in bytes[offset..<offset + size] { value = value << 8 | UInt64(byte) }
    let shift = UInt64(64 - size * 8)
    return Int64(bitPattern: value << shift) >> Int64(shift)
  }
}
